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
#include "wakeup.h"

#include <dlfcn.h>
#include <stdatomic.h>

typedef void (*async_function)(void *queue, void *context, void *work);
typedef void (*async_block)(void *queue, void *block);

/// The main queue's address (set when a monitor first watches it; NULL: nothing is noted).
static _Atomic(void *) main_queue;
/// Slots that watch the main queue, their pending flags, and whether any enqueue was seen here.
static _Atomic uint64_t watching;
static atomic_int pending[CStallMonitor_wakeup_slot_count];
static atomic_int seen;

static int valid(int slot) { return slot >= 0 && slot < CStallMonitor_wakeup_slot_count; }

void CStallMonitor_main_slot_reset(int slot) {
    if (!valid(slot)) return;
    atomic_fetch_and(&watching, ~(1ull << slot));
    atomic_store(&pending[slot], 0);
}

static void note_main_enqueue(void) {
    uint64_t watchers = atomic_load_explicit(&watching, memory_order_relaxed);
    if (watchers == 0) return;
    if (atomic_load_explicit(&seen, memory_order_relaxed) == 0) atomic_store(&seen, 1);
    uint64_t noted = 0;
    for (uint64_t left = watchers; left != 0; left &= left - 1) {
        int index = __builtin_ctzll(left);
        if (atomic_load(&pending[index]) != 0) continue;
        atomic_store(&pending[index], 1);
        noted |= 1ull << index;
    }
    if (noted != 0) CStallMonitor_wakeup_post_parked(noted);
}

static void note_if_main(void *queue) {
    void *main = atomic_load_explicit(&main_queue, memory_order_relaxed);
    if (main != NULL && queue == main) note_main_enqueue();
}

__attribute__((weak)) void dispatch_async_f(void *queue, void *context, void *work) {
    static _Atomic(async_function) real;
    async_function next = atomic_load_explicit(&real, memory_order_acquire);
    if (next == NULL) {
        next = (async_function)dlsym(RTLD_NEXT, "dispatch_async_f");
        atomic_store_explicit(&real, next, memory_order_release);
    }
    note_if_main(queue);
    next(queue, context, work);
}

__attribute__((weak)) void dispatch_async(void *queue, void *block) {
    static _Atomic(async_block) real;
    async_block next = atomic_load_explicit(&real, memory_order_acquire);
    if (next == NULL) {
        next = (async_block)dlsym(RTLD_NEXT, "dispatch_async");
        atomic_store_explicit(&real, next, memory_order_release);
    }
    note_if_main(queue);
    next(queue, block);
}

void CStallMonitor_main_watch(int slot, const void *queue) {
    if (!valid(slot) || queue == NULL) return;
    atomic_store(&main_queue, (void *)queue);
    atomic_store(&pending[slot], 1);  // nothing was noted before: the first look must not sleep
    atomic_fetch_or(&watching, 1ull << slot);
}

int CStallMonitor_main_enqueued(int slot) {
    if (!valid(slot)) return 1;
    return atomic_exchange(&pending[slot], 0);
}

int CStallMonitor_main_enqueues_seen(void) {
    return atomic_load(&seen);
}
