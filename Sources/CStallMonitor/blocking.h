// Blocking-call detection, internal to the C shim: the calls watched, their wrappers and the
// table that binds each name to its wrapper and to the function it forwards to.
#ifndef CSTALLMONITOR_BLOCKING_H
#define CSTALLMONITOR_BLOCKING_H

#include "CStallMonitor.h"

#include <stdatomic.h>
#include <stdint.h>

/// One watched call: its name in the dynamic symbol tables, the wrapper that replaces it in the
/// images' GOTs, and where the wrapper finds the function it forwards to (resolved at install).
struct cstallmonitor_blocking_hook {
    const char *name;
    void *wrapper;
    void **forward;
};

/// Every watched call, in `CStallMonitorBlockingCall` order (blocking_wrappers.c).
extern const struct cstallmonitor_blocking_hook cstallmonitor_blocking_hooks[];

/// A thread's blocking-detection state (blocking_recorder.c): marks and allowances are counted;
/// `inside` guards the recorder against the calls it makes itself; the stack's bounds are learned
/// at its first record; `loops` holds the watched loops run on the thread (index + 1 in the low 32
/// bits, generation above; 0: none); `loop_waits` is set while its RunLoop waits.
struct cstallmonitor_blocking_thread {
    int marked;
    int allowed;
    int inside;
    /// The thread's watched RunLoop is in its own wait (between beforeWaiting and afterWaiting).
    int loop_waits;
    uintptr_t stack_low, stack_high;
    uint64_t loops[4];
};

/// Initial-exec: one %fs-relative load per access instead of a call to __tls_get_addr (the shim
/// is linked into the executable, or into a library loaded with it).
extern __thread __attribute__((tls_model("initial-exec"))) struct cstallmonitor_blocking_thread cstallmonitor_blocking_thread_state;

/// Whether detection is on, and where the runtime's active-task word is (0: unknown).
extern atomic_int cstallmonitor_blocking_enabled;
extern _Atomic intptr_t cstallmonitor_blocking_task_word;

/// Fills `record`'s async callers (its `task` set; blocking_async_callers.c) from the words the
/// frame walk found under each saved frame pointer (`below`, `count` of them, leaf first) and the
/// calling thread's stack bounds.
void cstallmonitor_blocking_read_async_callers(CStallMonitorBlockingRecord *record, const uintptr_t *below,
                                               uint32_t count, uintptr_t stack_low, uintptr_t stack_high);

/// Copies the caller's stack for a record whose frame-pointer walk stopped short
/// (blocking_stack_copy.c): `frame` is the wrapper's frame record, `stack_high` the stack's top.
void cstallmonitor_blocking_copy_stack(CStallMonitorBlockingRecord *record, uintptr_t frame, uintptr_t stack_high);

/// The wrappers' clock (blocking_clock.c): set once, at detection's first start, before any call
/// is timed: 1 when it is the CPU's time-stamp counter, 0 when it is CLOCK_MONOTONIC in ns.
extern atomic_int cstallmonitor_blocking_uses_tsc;

/// The threshold in the wrappers' clock's units (a little under it with the counter, whose rate is
/// measured: `end` checks the nanoseconds).
extern _Atomic uint64_t cstallmonitor_blocking_threshold_ticks;

/// Measures the counter's rate (once per process) and sets the threshold in ticks.
void cstallmonitor_blocking_clock_start(uint64_t threshold_ns);

/// Nanoseconds in `ticks` of the wrappers' clock.
uint64_t cstallmonitor_blocking_ticks_to_ns(uint64_t ticks);

/// The wrappers' clock now: never 0.
__attribute__((always_inline)) static inline uint64_t cstallmonitor_blocking_clock(void) {
#if defined(__x86_64__)
    if (atomic_load_explicit(&cstallmonitor_blocking_uses_tsc, memory_order_relaxed)) return __builtin_ia32_rdtsc();
#endif
    return CStallMonitor_monotonic_ns();
}

/// The slow half of `cstallmonitor_blocking_begin`: a thread with loop registrations, or a task
/// word not learned; then the clock.
uint64_t cstallmonitor_blocking_begin_checked(void);

/// Called first by every wrapper: 0 when the call is not to be timed (detection off, a thread that
/// may block, an allowed scope, the recorder itself), else the wrappers' clock at entry. Inline, so
/// a call on a thread that may block costs the wrapper a handful of loads and no call.
__attribute__((always_inline)) static inline uint64_t cstallmonitor_blocking_begin(void) {
    if (!atomic_load_explicit(&cstallmonitor_blocking_enabled, memory_order_relaxed)) return 0;
    struct cstallmonitor_blocking_thread *thread = &cstallmonitor_blocking_thread_state;
    if (thread->allowed > 0 || thread->inside || thread->loop_waits) return 0;
    if (thread->marked > 0) return cstallmonitor_blocking_clock();
    intptr_t offset = atomic_load_explicit(&cstallmonitor_blocking_task_word, memory_order_relaxed);
    if (thread->loops[0] != 0 || offset == 0) return cstallmonitor_blocking_begin_checked();
    if (*(void *const *)((char *)__builtin_thread_pointer() + offset) == NULL) return 0;
    return cstallmonitor_blocking_clock();
}

/// Called after the forwarded call returned when `begin` gave a time: the clock's ticks since
/// `start`, or 0 when fewer than the threshold's (the wrapper then returns at once). Inline: a
/// timed call that did not block costs the wrapper one more clock read and a compare.
__attribute__((always_inline)) static inline uint64_t cstallmonitor_blocking_elapsed(uint64_t start) {
    uint64_t elapsed = cstallmonitor_blocking_clock() - start;
    // A counter that went backwards (never, where the kernel trusts it) reads as huge: not a call.
    if ((int64_t)elapsed < 0) return 0;
    return elapsed >= atomic_load_explicit(&cstallmonitor_blocking_threshold_ticks, memory_order_relaxed) ? elapsed : 0;
}

/// Records a call whose `elapsed` ticks since `start` passed the threshold in ticks, when it
/// blocked at least the threshold. `return_address` and `frame` are the wrapper's: where the
/// caller called it and the wrapper's frame pointer (its caller's frames are above it). Keeps errno.
void cstallmonitor_blocking_end(int call, uint64_t elapsed, int descriptor, void *return_address, void *frame);

/// `descriptor` values of cstallmonitor_blocking_end that are not a descriptor: nothing to check,
/// or a call that cannot have waited (a poll or select with a zero timeout: its time was spent
/// running or preempted, never asleep).
enum { CSTALLMONITOR_NO_DESCRIPTOR = -1, CSTALLMONITOR_CANNOT_WAIT = -2 };

#endif
