// Waking a sleeping watchdog when work reaches the Swift concurrency pool.
//
// The Swift runtime hands every job bound for the global executor (a new task, a task resumed
// by a continuation, a timer or an actor, a default actor's drain) to swift_task_enqueueGlobal,
// which calls swift_task_enqueueGlobal_hook when one is set. Ours hands the job on unchanged (to a
// hook installed before ours, else to the runtime's own enqueue), then notes the enqueue for every
// wake-up slot that watches the pool. While a slot's flag is already set the hook does two
// loads for the flags: a busy pool costs no fence and no wake-up there. While any slot watches,
// it also writes the job's entry in the table of recent enqueues (pool_jobs.c: one load, two
// stores, a coarse clock read), which tells the pool probe that a task it saw running has run a
// new job since, and when that job was enqueued.
//
// The hook is installed while a monitor watches the pool and taken out when the last one stops,
// if nothing was installed after it (else it stays, passing jobs on: another hook may call it).
// SwiftNIO's takeover of the global executor only installs itself where no hook is set: a program
// that wants it makes it before a monitor watches the pool.
#include "CStallMonitor.h"
#include "own_code.h"
#include "pool_jobs.h"
#include "wakeup.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>

#define CSTALLMONITOR_SWIFTCALL __attribute__((swiftcall))

typedef CSTALLMONITOR_SWIFTCALL void (*enqueue_original)(void *job);
typedef CSTALLMONITOR_SWIFTCALL void (*enqueue_hook)(void *job, enqueue_original original);

/// Slots that watch the pool (the hook sets their pending flags).
static CStallMonitor_wakeup_flags *const flags = &CStallMonitor_wakeup_producer_flags[CStallMonitor_wakeup_producer_pool];

static _Atomic(enqueue_hook *) hook_variable;
static _Atomic(enqueue_hook) previous_hook;  // atomic: the runtime's uninstrumented read of the hook orders nothing for TSan
/// Installing and removing (never the hook's path): how many watchers want it, and whether ours
/// is (or may still be) in the runtime's chain.
static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static int hook_users;
static int hook_in_chain;

/// The job's entry in the table before the hand-over (a worker may run the job at once), the
/// note that wakes the watchdog after it: a look that takes the flag knows every job noted so far
/// is in libdispatch's hands, which wakes a sleeping worker or starts a thread before it returns.
/// So a look that then finds every worker asleep and no thread born knows that no job is on its
/// way, however long the enqueuing thread was preempted in between.
CSTALLMONITOR_OWN_CODE static CSTALLMONITOR_SWIFTCALL void pool_enqueue_hook(void *job, enqueue_original original) {
    uint64_t watchers = atomic_load_explicit(&flags->watching, memory_order_relaxed);
    if (watchers != 0) CStallMonitor_pool_note_job(job);
    enqueue_hook previous = atomic_load_explicit(&previous_hook, memory_order_acquire);
    if (previous != NULL) {
        previous(job, original);
    } else {
        original(job);
    }
    if (watchers != 0) CStallMonitor_wakeup_flags_note_slots(flags, watchers);
}

int CStallMonitor_pool_hook_install(void) {
    pthread_mutex_lock(&install_lock);
    enqueue_hook *variable = atomic_load(&hook_variable);
    if (variable == NULL) {
        variable = dlsym(RTLD_DEFAULT, "swift_task_enqueueGlobal_hook");
        atomic_store(&hook_variable, variable);
    }
    if (variable == NULL) {
        pthread_mutex_unlock(&install_lock);
        return -1;
    }
    if (!hook_in_chain) {
        atomic_store(&previous_hook, __atomic_load_n(variable, __ATOMIC_ACQUIRE));
        __atomic_store_n(variable, pool_enqueue_hook, __ATOMIC_RELEASE);
        hook_in_chain = 1;
    }
    hook_users++;
    pthread_mutex_unlock(&install_lock);
    return 0;
}

void CStallMonitor_pool_hook_uninstall(void) {
    pthread_mutex_lock(&install_lock);
    enqueue_hook *variable = atomic_load(&hook_variable);
    if (hook_users > 0 && --hook_users == 0 && hook_in_chain && variable != NULL) {
        enqueue_hook expected = pool_enqueue_hook;
        enqueue_hook previous = atomic_load(&previous_hook);
        if (__atomic_compare_exchange_n(variable, &expected, previous, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) hook_in_chain = 0;
    }
    pthread_mutex_unlock(&install_lock);
}

int CStallMonitor_pool_hook_active(void) {
    enqueue_hook *variable = atomic_load(&hook_variable);
    return variable != NULL && __atomic_load_n(variable, __ATOMIC_ACQUIRE) == pool_enqueue_hook;
}

void CStallMonitor_pool_watch(int slot) { CStallMonitor_wakeup_flags_watch(flags, slot); }

int CStallMonitor_pool_enqueued(int slot) { return CStallMonitor_wakeup_flags_take(flags, slot); }

void CStallMonitor_pool_arm(int slot, int armed) { CStallMonitor_wakeup_flags_arm(flags, slot, armed); }

int CStallMonitor_pool_enqueues_watched(void) {
    return atomic_load(&flags->watching) != 0 && CStallMonitor_pool_hook_active();
}
