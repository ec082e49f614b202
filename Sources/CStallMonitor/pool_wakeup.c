// Waking a sleeping watchdog when work reaches the Swift concurrency pool.
//
// The Swift runtime hands every job bound for the global executor (a new task, a task resumed
// by a continuation, a timer or an actor, a default actor's drain) to swift_task_enqueueGlobal,
// which calls swift_task_enqueueGlobal_hook when one is set. Ours notes the enqueue and hands the
// job on unchanged (to a hook installed before ours, else to the runtime's own enqueue).
//
// A watchdog watches the pool through a wake-up slot: a semaphore in static storage (never
// destroyed, so a hook that read a slot just before it was released posts into valid memory)
// with a pending flag. The hook and a watchdog about to sleep form a Dekker pair on sequentially
// consistent atomics: the hook sets the pending flag, then reads the parked set; the watchdog sets
// its parked bit, then takes the pending flag. At least one of them sees the other, so an enqueue
// either keeps the watchdog from sleeping or wakes it. While the flag is already set the hook
// does two loads and nothing else: a busy pool costs no store, no fence and no wake-up.
#include "CStallMonitor.h"

#include <dlfcn.h>
#include <semaphore.h>
#include <stdatomic.h>

#define CSTALLMONITOR_SWIFTCALL __attribute__((swiftcall))

typedef CSTALLMONITOR_SWIFTCALL void (*enqueue_original)(void *job);
typedef CSTALLMONITOR_SWIFTCALL void (*enqueue_hook)(void *job, enqueue_original original);

enum { slot_count = 64 };

static struct {
    atomic_int used;
    atomic_int initialized;
    sem_t semaphore;
} slots[slot_count];

/// Slots that watch the pool (the hook sets their pending flags), and those asleep until an enqueue.
static _Atomic uint64_t watching;
static _Atomic uint64_t parked;
static atomic_int pending[slot_count];

static enqueue_hook *hook_variable;
static _Atomic(enqueue_hook) previous_hook;  // atomic: the runtime's uninstrumented read of the hook orders nothing for TSan
static atomic_int install_state;  // 0: not tried, 1: installing, 2: installed, 3: unavailable

int CStallMonitor_wakeup_slot_acquire(void) {
    for (int index = 0; index < slot_count; index++) {
        int free_slot = 0;
        if (!atomic_compare_exchange_strong(&slots[index].used, &free_slot, 1)) continue;
        if (atomic_load(&slots[index].initialized)) {
            while (sem_trywait(&slots[index].semaphore) == 0) {}  // posts meant for its last owner
        } else {
            sem_init(&slots[index].semaphore, 0, 0);
            atomic_store(&slots[index].initialized, 1);
        }
        atomic_store(&pending[index], 0);
        return index;
    }
    return -1;
}

void CStallMonitor_wakeup_slot_release(int slot) {
    if (slot < 0 || slot >= slot_count) return;
    uint64_t bit = 1ull << slot;
    atomic_fetch_and(&watching, ~bit);
    atomic_fetch_and(&parked, ~bit);
    atomic_store(&slots[slot].used, 0);
}

sem_t *CStallMonitor_wakeup_slot_semaphore(int slot) {
    return &slots[slot].semaphore;
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
    if (noted == 0) return;
    uint64_t sleeping = atomic_load(&parked) & noted;
    if (sleeping == 0) return;
    sleeping &= atomic_fetch_and(&parked, ~sleeping);
    for (; sleeping != 0; sleeping &= sleeping - 1) sem_post(&slots[__builtin_ctzll(sleeping)].semaphore);
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
    if (slot < 0 || slot >= slot_count) return;
    atomic_store(&pending[slot], 1);  // nothing was noted before: the first look must not sleep
    atomic_fetch_or(&watching, 1ull << slot);
}

int CStallMonitor_pool_enqueued(int slot) {
    if (slot < 0 || slot >= slot_count) return 1;
    return atomic_exchange(&pending[slot], 0);
}

int CStallMonitor_pool_park(int slot) {
    if (slot < 0 || slot >= slot_count) return 0;
    uint64_t bit = 1ull << slot;
    atomic_fetch_or(&parked, bit);
    if (atomic_exchange(&pending[slot], 0) != 0) {
        atomic_fetch_and(&parked, ~bit);
        return 0;
    }
    return 1;
}

void CStallMonitor_pool_unpark(int slot) {
    if (slot < 0 || slot >= slot_count) return;
    atomic_fetch_and(&parked, ~(1ull << slot));
}
