// A watchdog's late post: its slot's timerfd, which a producer arms instead of posting the slot,
// so that the watchdog wakes a moment after the note (the watchdog waits on the slot's eventfd and
// its timerfd at once, wakeup_slots.c).
//
// The pool's enqueue hook notes a job as soon as libdispatch has it. Posted at once, the watchdog
// looks while the job is starting or running, finds the pool busy and looks again a moment later,
// when it is done: two wake-ups for each job of an idle server's timer (Hummingbird's date cache,
// once a second). Posted `delay` later (the quick look's 2 ms), its one look finds a short job
// over and the pool settled; a job still running then is dated from its enqueue (the table of
// recent enqueues), as before.
//
// A timer and not a signal: a POSIX timer that signalled the watchdog thread would wake every
// signalfd of the process too (the kernel notifies them of any signal sent to any of its threads),
// and libdispatch's event thread polls one as soon as the host has a `DispatchSource` for a signal
// (ServiceLifecycle's graceful shutdown): measured on an idle Hummingbird 2 server, that thread
// woke once more per job, the wake-up the watchdog saved.
#include "CStallMonitor.h"
#include "own_code.h"
#include "wakeup.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

/// Each slot's delay (ns; 0: producers post at once).
static _Atomic uint64_t delays[CStallMonitor_wakeup_slot_count];
/// Slots whose timer a producer armed and the watchdog has not woken for since.
static _Atomic uint64_t armed;

int CStallMonitor_wakeup_late_post_enable(int slot, uint64_t delay_ns) {
    if (!CStallMonitor_wakeup_flags_valid(slot) || delay_ns == 0) return -1;
    if (CStallMonitor_wakeup_slot_timer_fd(slot) < 0) return -1;
    atomic_store(&delays[slot], delay_ns);
    return 0;
}

void CStallMonitor_wakeup_late_post_disable(int slot) {
    if (!CStallMonitor_wakeup_flags_valid(slot)) return;
    atomic_store(&delays[slot], 0);
    CStallMonitor_wakeup_late_post_taken(slot);
}

CSTALLMONITOR_OWN_CODE int CStallMonitor_wakeup_late_post_arm(int slot) {
    uint64_t delay = atomic_load(&delays[slot]);
    if (delay == 0) return 0;
    int timer = CStallMonitor_wakeup_slot_timer_fd(slot);
    if (timer < 0) return 0;
    struct itimerspec when = {
        .it_interval = {0, 0},
        .it_value = {.tv_sec = (time_t)(delay / 1000000000ull), .tv_nsec = (long)(delay % 1000000000ull)},
    };
    atomic_fetch_or(&armed, 1ull << slot);
    if (timerfd_settime(timer, 0, &when, NULL) == 0) return 1;
    atomic_fetch_and(&armed, ~(1ull << slot));
    return 0;
}

int CStallMonitor_wakeup_late_post_taken(int slot) {
    if (!CStallMonitor_wakeup_flags_valid(slot)) return 0;
    int fired = CStallMonitor_wakeup_slot_take_timer_ended(slot);
    if ((atomic_fetch_and(&armed, ~(1ull << slot)) & (1ull << slot)) != 0 && !fired) {
        // The watchdog woke before the timer expired (a deadline, another producer): no late post
        // now, and none left behind to end its next sleep at once.
        int timer = CStallMonitor_wakeup_slot_timer_fd(slot);
        if (timer >= 0) {
            struct itimerspec never;
            memset(&never, 0, sizeof(never));
            timerfd_settime(timer, 0, &never, NULL);
            uint64_t expirations;
            (void)!read(timer, &expirations, sizeof(expirations));
        }
    }
    return fired;
}
