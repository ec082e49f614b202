// Waking a sleeping watchdog when a watched event loop returns from epoll_wait.
//
// A SwiftNIO event loop calls nobody when it wakes. This file defines epoll_wait itself, weakly:
// an executable that links StallMonitor and calls epoll_wait from its own code (NIOPosix, linked
// into the same executable) calls this one, which waits with epoll_pwait (no signal mask: the
// same call) and, on a thread whose loop a monitor watches, notes the return for the watchdog's
// wake-up slot. Any other thread pays one thread-local load. A host or sanitizer runtime that
// defines epoll_wait too keeps its own (weak loses to strong; between weak ones the linker keeps
// the first): the watch then never sees its thread enter this one, and the probe keeps looking
// at the loop at its interval.
#include "CStallMonitor.h"
#include "own_code.h"
#include "wakeup.h"

#include <stdatomic.h>
#include <errno.h>
#include <sys/epoll.h>

enum { watch_count = 256, watches_per_thread = 4 };

static struct {
    atomic_int used;
    /// Bumped at each acquire: a thread registered for an earlier owner is ignored.
    atomic_uint generation;
    /// The wake-up slot to post (-1 until bound).
    atomic_int slot;
    /// Set on entry to epoll_wait on a registered thread (once), and on each return (cleared by the watchdog).
    atomic_int entered;
    atomic_int woke;
    /// When its thread last returned from the wait (CLOCK_MONOTONIC ns; 0: not yet): a look that
    /// finds the loop busy dates its span from there.
    _Atomic uint64_t returned_at;
    /// The loop's probe lets the watchdog sleep until its next return (it found the loop idle):
    /// only then does a return post the slot, which other probes may have parked the watchdog on.
    atomic_int armed;
} watches[watch_count];

/// The watches registered on this thread: index + 1 in the low 32 bits, generation above (0: none).
static __thread uint64_t thread_watches[watches_per_thread];

static int valid(int watch) { return watch >= 0 && watch < watch_count; }

int CStallMonitor_loop_watch_acquire(void) {
    for (int index = 0; index < watch_count; index++) {
        int free_watch = 0;
        if (!atomic_compare_exchange_strong(&watches[index].used, &free_watch, 1)) continue;
        atomic_fetch_add(&watches[index].generation, 1);
        atomic_store(&watches[index].slot, -1);
        atomic_store(&watches[index].entered, 0);
        atomic_store(&watches[index].woke, 1);
        atomic_store(&watches[index].armed, 0);
        atomic_store(&watches[index].returned_at, 0);
        return index;
    }
    return -1;
}

void CStallMonitor_loop_watch_release(int watch) {
    if (!valid(watch)) return;
    atomic_store(&watches[watch].slot, -1);
    atomic_fetch_add(&watches[watch].generation, 1);
    atomic_store(&watches[watch].used, 0);
}

int CStallMonitor_loop_watch_here(int watch) {
    if (!valid(watch)) return -1;
    uint64_t entry = ((uint64_t)atomic_load(&watches[watch].generation) << 32) | (uint32_t)(watch + 1);
    for (int index = 0; index < watches_per_thread; index++) {
        uint64_t old = thread_watches[index];
        int old_watch = (int)(uint32_t)old - 1;
        if (old == 0 || (uint32_t)(old >> 32) != atomic_load(&watches[old_watch].generation)) {
            thread_watches[index] = entry;
            return 0;
        }
    }
    return -1;
}

void CStallMonitor_loop_watch_bind(int watch, int slot) {
    if (!valid(watch)) return;
    atomic_store(&watches[watch].woke, 1);  // nothing was noted before: the first look must not sleep
    atomic_store(&watches[watch].slot, slot);
}

int CStallMonitor_loop_watch_entered(int watch) {
    return valid(watch) ? atomic_load(&watches[watch].entered) : 0;
}

void CStallMonitor_loop_watch_arm(int watch, int armed) {
    if (valid(watch)) atomic_store(&watches[watch].armed, armed != 0);
}

int CStallMonitor_loop_watch_woke(int watch) {
    return valid(watch) ? atomic_exchange(&watches[watch].woke, 0) : 1;
}

uint64_t CStallMonitor_loop_watch_returned_at(int watch) {
    return valid(watch) ? atomic_load_explicit(&watches[watch].returned_at, memory_order_relaxed) : 0;
}

/// The thread's valid watches, called around its wait: on return, the time first (one clock read
/// per return, about 20 ns), then the wake-up.
CSTALLMONITOR_OWN_CODE static inline void note_wait(int returned) {
    uint64_t returned_at = returned ? CStallMonitor_monotonic_ns() : 0;
    for (int index = 0; index < watches_per_thread; index++) {
        uint64_t entry = thread_watches[index];
        if (entry == 0) continue;
        int watch = (int)(uint32_t)entry - 1;
        if ((uint32_t)(entry >> 32) != atomic_load_explicit(&watches[watch].generation, memory_order_relaxed)) continue;
        if (!returned) {
            if (atomic_load_explicit(&watches[watch].entered, memory_order_relaxed) == 0) atomic_store(&watches[watch].entered, 1);
            continue;
        }
        atomic_store_explicit(&watches[watch].returned_at, returned_at, memory_order_relaxed);
        if (atomic_load(&watches[watch].woke) != 0) continue;
        atomic_store(&watches[watch].woke, 1);
        if (!atomic_load(&watches[watch].armed)) continue;
        int slot = atomic_load(&watches[watch].slot);
        if (slot >= 0 && slot < CStallMonitor_wakeup_slot_count) CStallMonitor_wakeup_post_parked(1ull << slot, 0);
    }
}

CSTALLMONITOR_OWN_CODE __attribute__((weak)) int epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout) {
    int watched = thread_watches[0] != 0;
    if (watched) note_wait(0);
    int result = epoll_pwait(epfd, events, maxevents, timeout, NULL);
    if (watched) {
        int saved = errno;
        note_wait(1);
        errno = saved;
    }
    return result;
}

int CStallMonitor_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int CStallMonitor_epoll_wait_once(int epfd, int timeout_ms, int through_shim) {
    struct epoll_event event;
    return through_shim ? epoll_wait(epfd, &event, 1, timeout_ms) : epoll_pwait(epfd, &event, 1, timeout_ms, NULL);
}
