// Waking a sleeping watchdog when work reaches the Swift concurrency pool.
//
// The Swift runtime hands every job bound for the global executor (a new task, a task resumed
// by a continuation, a timer or an actor, a default actor's drain) to swift_task_enqueueGlobal,
// which calls swift_task_enqueueGlobal_hook when one is set. Ours notes the enqueue for every
// wake-up slot that watches the pool and hands the job on unchanged (to a hook installed before
// ours, else to the runtime's own enqueue). While a slot's flag is already set the hook does two
// loads and nothing else: a busy pool costs no store, no fence and no wake-up.
#include "CStallMonitor.h"
#include "wakeup.h"

#include <dlfcn.h>
#include <stdatomic.h>

#define CSTALLMONITOR_SWIFTCALL __attribute__((swiftcall))

typedef CSTALLMONITOR_SWIFTCALL void (*enqueue_original)(void *job);
typedef CSTALLMONITOR_SWIFTCALL void (*enqueue_hook)(void *job, enqueue_original original);

/// Slots that watch the pool (the hook sets their pending flags).
static _Atomic uint64_t watching;
static atomic_int pending[CStallMonitor_wakeup_slot_count];

static enqueue_hook *hook_variable;
static _Atomic(enqueue_hook) previous_hook;  // atomic: the runtime's uninstrumented read of the hook orders nothing for TSan
static atomic_int install_state;  // 0: not tried, 1: installing, 2: installed, 3: unavailable

static int valid(int slot) { return slot >= 0 && slot < CStallMonitor_wakeup_slot_count; }

void CStallMonitor_pool_slot_reset(int slot) {
    if (!valid(slot)) return;
    atomic_fetch_and(&watching, ~(1ull << slot));
    atomic_store(&pending[slot], 0);
}

static void note_pool_enqueue(void) {
    uint64_t watchers = atomic_load_explicit(&watching, memory_order_relaxed);
    if (watchers == 0) return;
    uint64_t noted = 0;
    for (uint64_t left = watchers; left != 0; left &= left - 1) {
        int index = __builtin_ctzll(left);
        if (atomic_load(&pending[index]) != 0) continue;
        atomic_store(&pending[index], 1);
        noted |= 1ull << index;
    }
    if (noted != 0) CStallMonitor_wakeup_post_parked(noted);
}

static CSTALLMONITOR_SWIFTCALL void pool_enqueue_hook(void *job, enqueue_original original) {
    note_pool_enqueue();
    enqueue_hook previous = atomic_load_explicit(&previous_hook, memory_order_acquire);
    if (previous != NULL) {
        previous(job, original);
    } else {
        original(job);
    }
}

int CStallMonitor_pool_hook_install(void) {
    int state = 0;
    if (atomic_compare_exchange_strong(&install_state, &state, 1)) {
        enqueue_hook *variable = dlsym(RTLD_DEFAULT, "swift_task_enqueueGlobal_hook");
        if (variable == NULL) {
            atomic_store(&install_state, 3);
        } else {
            hook_variable = variable;
            atomic_store(&previous_hook, __atomic_load_n(variable, __ATOMIC_ACQUIRE));
            __atomic_store_n(variable, pool_enqueue_hook, __ATOMIC_RELEASE);
            atomic_store(&install_state, 2);
        }
    }
    while ((state = atomic_load(&install_state)) == 1) {}
    return state == 2 ? 0 : -1;
}

int CStallMonitor_pool_hook_active(void) {
    if (atomic_load(&install_state) != 2) return 0;
    return __atomic_load_n(hook_variable, __ATOMIC_ACQUIRE) == pool_enqueue_hook;
}

void CStallMonitor_pool_watch(int slot) {
    if (!valid(slot)) return;
    atomic_store(&pending[slot], 1);  // nothing was noted before: the first look must not sleep
    atomic_fetch_or(&watching, 1ull << slot);
}

int CStallMonitor_pool_enqueued(int slot) {
    if (!valid(slot)) return 1;
    return atomic_exchange(&pending[slot], 0);
}
