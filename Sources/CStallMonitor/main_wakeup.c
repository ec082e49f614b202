// Waking a sleeping watchdog when work reaches the Dispatch main queue (the MainActor of an
// `async main` or dispatchMain() program).
//
// The Swift runtime hands each MainActor job to dispatch_async_f on the main queue (Swift 6.3:
// swift_dispatchEnqueueMain, no hook), and DispatchQueue.main.async calls dispatch_async. This
// file defines both, weakly: an executable that links StallMonitor exports them, so libdispatch's
// callers in the process (the Swift runtime, the Dispatch overlay, Foundation) call these, which
// note a main-queue enqueue for every wake-up slot that watches the main queue and hand the call
// on unchanged to libdispatch's own (found with dlsym(RTLD_NEXT)). Any other queue costs two loads
// and a compare. While a slot's flag is already set a main-queue enqueue does two loads more: no
// store, no fence, no wake-up.
//
// A host or sanitizer runtime that defines them too keeps its own (ThreadSanitizer intercepts
// both, weakly, and its definition comes first): no enqueue is then ever seen here, and the
// probe keeps looking at the main queue at its interval. Work that reaches the main queue another
// way (dispatch_after, a source, a barrier) is seen at the next look, at most 2 s later.
#include "CStallMonitor.h"
#include "own_code.h"
#include "wakeup.h"

#include <dlfcn.h>
#include <stdatomic.h>

typedef void (*async_function)(void *queue, void *context, void *work);
typedef void (*async_block)(void *queue, void *block);

/// The main queue's address (set when a monitor first watches it; NULL: nothing is noted).
static _Atomic(void *) main_queue;
/// Slots that watch the main queue, and whether an enqueue was ever noted here while one did.
static CStallMonitor_wakeup_flags *const flags = &CStallMonitor_wakeup_producer_flags[CStallMonitor_wakeup_producer_main_queue];
static atomic_int seen;

CSTALLMONITOR_OWN_CODE static void note_if_main(void *queue) {
    void *main = atomic_load_explicit(&main_queue, memory_order_relaxed);
    if (main == NULL || queue != main || !CStallMonitor_wakeup_flags_note(flags)) return;
    if (atomic_load_explicit(&seen, memory_order_relaxed) == 0) atomic_store(&seen, 1);
}

/// libdispatch's own definition of `name` (the next one after this file's), looked up at the first
/// call and kept in `real`.
CSTALLMONITOR_OWN_CODE static void *next_definition(_Atomic(void *) *real, const char *name) {
    void *next = atomic_load_explicit(real, memory_order_acquire);
    if (next == NULL) {
        next = dlsym(RTLD_NEXT, name);
        atomic_store_explicit(real, next, memory_order_release);
    }
    return next;
}

CSTALLMONITOR_OWN_CODE __attribute__((weak)) void dispatch_async_f(void *queue, void *context, void *work) {
    static _Atomic(void *) real;
    async_function next = (async_function)next_definition(&real, "dispatch_async_f");
    note_if_main(queue);
    next(queue, context, work);
}

CSTALLMONITOR_OWN_CODE __attribute__((weak)) void dispatch_async(void *queue, void *block) {
    static _Atomic(void *) real;
    async_block next = (async_block)next_definition(&real, "dispatch_async");
    note_if_main(queue);
    next(queue, block);
}

void CStallMonitor_main_watch(int slot, const void *queue) {
    if (!CStallMonitor_wakeup_flags_valid(slot) || queue == NULL) return;
    atomic_store(&main_queue, (void *)queue);
    CStallMonitor_wakeup_flags_watch(flags, slot);
}

int CStallMonitor_main_enqueued(int slot) { return CStallMonitor_wakeup_flags_take(flags, slot); }

void CStallMonitor_main_arm(int slot, int armed) { CStallMonitor_wakeup_flags_arm(flags, slot, armed); }

int CStallMonitor_main_enqueues_seen(void) {
    return atomic_load(&seen);
}
