// Which jobs were enqueued on the Swift concurrency pool lately: how the pool probe tells a
// task's next job from the one it saw running (a task that suspended and was resumed between two
// looks, on the same worker, runs a new job).
//
// The enqueue hook (pool_wakeup.c) writes, for every job it hands on, one word of a fixed table,
// chosen by the job's address: the address (jobs are 16-byte aligned) with a 4-bit count of that
// entry's writes in its low bits. A task is enqueued only when it does not run (it is new, or it
// was suspended and is resumed), so an entry that names the task a worker runs and has changed
// since the watchdog's last look means the task was enqueued again since then: a new job.
// Another job whose address falls in the same entry can hide an enqueue (two jobs seen as one,
// never one job split: the entry then names that other job). The hook stores the entry before
// it hands the job on, and a worker starts the job only after it took it from the queue, so a
// look that reads the worker's active-task word and then the entry (x86_64: stores are seen in
// one order by every thread) finds the enqueue that started the job it saw.
//
// Beside each entry the hook keeps when it was last written (CLOCK_MONOTONIC_COARSE: a few ns,
// never ahead of the fine clock, behind it by less than a tick). A job that a free worker takes
// starts within moments of its enqueue, so the probe dates a job enqueued after its last look
// from the enqueue rather than from the middle of the interval between two looks: what matters
// when the watchdog itself is late (a loaded machine) and that interval grows long.
#include "CStallMonitor.h"
#include "own_code.h"
#include "pool_jobs.h"

#include <stdatomic.h>

enum { table_bits = 12, count_mask = 15 };

static _Atomic uintptr_t recent_jobs[1 << table_bits];
/// When each entry of `recent_jobs` was last written (coarse monotonic ns), stored before it.
static _Atomic uint64_t recent_times[1 << table_bits];

CSTALLMONITOR_OWN_CODE static inline size_t index_of(uintptr_t job) {
    return (size_t)((((uint64_t)job >> 4) * 0x9E3779B97F4A7C15ull) >> (64 - table_bits));
}

CSTALLMONITOR_OWN_CODE void CStallMonitor_pool_note_job(void *job) {
    uintptr_t address = (uintptr_t)job;
    size_t index = index_of(address);
    uintptr_t count = (atomic_load_explicit(&recent_jobs[index], memory_order_relaxed) + 1) & count_mask;
    atomic_store_explicit(&recent_times[index], CStallMonitor_coarse_monotonic_ns(), memory_order_relaxed);
    atomic_store_explicit(&recent_jobs[index], (address & ~(uintptr_t)count_mask) | count, memory_order_release);
}

uintptr_t CStallMonitor_pool_job_mark(uintptr_t task, uint64_t *enqueued_at) {
    size_t index = index_of(task);
    uintptr_t mark = atomic_load_explicit(&recent_jobs[index], memory_order_acquire);
    uint64_t time = atomic_load_explicit(&recent_times[index], memory_order_acquire);
    // A write in between may have paired another enqueue's time with this mark: no time then.
    *enqueued_at = atomic_load_explicit(&recent_jobs[index], memory_order_acquire) == mark ? time : 0;
    return mark;
}
