// Shared between the wake-up slots and their producers (not part of the shim's interface).
// Producers (pool_wakeup.c, main_wakeup.c, loop_wakeup.c) call into the slots; the slots never
// call a producer: each producer's flags live here, with the slots, and a slot taken or given
// back clears them all itself.
#ifndef CSTALLMONITOR_WAKEUP_H
#define CSTALLMONITOR_WAKEUP_H

#include <stdatomic.h>
#include <stdint.h>

#include "own_code.h"

enum { CStallMonitor_wakeup_slot_count = 64 };

/// Posts every slot in `noted` whose watchdog is parked (after the producer set its flags). With
/// `late`, a slot whose watchdog keeps a late post's timer is posted by that timer a moment later
/// (wakeup_late_post.c); the others at once.
void CStallMonitor_wakeup_post_parked(uint64_t noted, int late);

/// Arms the slot's late post (wakeup_late_post.c) if its watchdog asked for one; returns whether it
/// did (else the producer posts at once).
int CStallMonitor_wakeup_late_post_arm(int slot);
/// The slot's late post goes (a slot taken or given back).
void CStallMonitor_wakeup_late_post_disable(int slot);
/// The slot's timerfd (-1: none).
int CStallMonitor_wakeup_slot_timer_fd(int slot);
/// Whether the slot's last wait was ended by its timerfd (clears it).
int CStallMonitor_wakeup_slot_take_timer_ended(int slot);

/// One kind of producer's side of the slots (the pool's enqueues, the main queue's): which slots
/// watch it, and for each whether work was noted since its watchdog last took the flag.
typedef struct {
    /// This producer's work starts a moment after its note (a job handed to libdispatch): a slot
    /// that keeps a late post is posted by it.
    int posts_late;
    _Atomic uint64_t watching;
    /// Slots whose probe let the watchdog sleep until this producer's next note (its queue was
    /// quiet): only those are posted. A slot the watchdog parks for another probe's sake (an idle
    /// loop beside a busy pool) is not woken by every note of this one.
    _Atomic uint64_t armed;
    atomic_int pending[CStallMonitor_wakeup_slot_count];
} CStallMonitor_wakeup_flags;

/// The producers whose notes wake a parked watchdog through its flags (the event loops' wake-ups
/// post a slot directly and keep no flags).
enum {
    CStallMonitor_wakeup_producer_pool,
    CStallMonitor_wakeup_producer_main_queue,
    CStallMonitor_wakeup_producer_count
};

/// Each producer's flags, kept with the slots (wakeup_slots.c) so that taking or giving back a
/// slot clears them without calling a producer.
extern CStallMonitor_wakeup_flags CStallMonitor_wakeup_producer_flags[CStallMonitor_wakeup_producer_count];

static inline int CStallMonitor_wakeup_flags_valid(int slot) {
    return slot >= 0 && slot < CStallMonitor_wakeup_slot_count;
}

/// The slot stops watching and its flag is cleared.
static inline void CStallMonitor_wakeup_flags_reset(CStallMonitor_wakeup_flags *flags, int slot) {
    if (!CStallMonitor_wakeup_flags_valid(slot)) return;
    atomic_fetch_and(&flags->watching, ~(1ull << slot));
    atomic_fetch_and(&flags->armed, ~(1ull << slot));
    atomic_store(&flags->pending[slot], 0);
}

/// The slot's probe lets the watchdog sleep until the next note (`armed` 1, before it parks the
/// slot and takes the flag), or no longer (0, once the watchdog woke).
static inline void CStallMonitor_wakeup_flags_arm(CStallMonitor_wakeup_flags *flags, int slot, int armed) {
    if (!CStallMonitor_wakeup_flags_valid(slot)) return;
    if (armed) {
        atomic_fetch_or(&flags->armed, 1ull << slot);
    } else {
        atomic_fetch_and(&flags->armed, ~(1ull << slot));
    }
}

/// The slot starts watching, its flag set (nothing was noted before: the first look must not sleep).
static inline void CStallMonitor_wakeup_flags_watch(CStallMonitor_wakeup_flags *flags, int slot) {
    if (!CStallMonitor_wakeup_flags_valid(slot)) return;
    atomic_store(&flags->pending[slot], 1);
    atomic_fetch_or(&flags->watching, 1ull << slot);
}

/// Whether work was noted for the slot since the last take (clears the flag; 1 for no slot).
static inline int CStallMonitor_wakeup_flags_take(CStallMonitor_wakeup_flags *flags, int slot) {
    if (!CStallMonitor_wakeup_flags_valid(slot)) return 1;
    return atomic_exchange(&flags->pending[slot], 0);
}

/// The note for the slots in `watchers` (a `watching` mask the producer loaded earlier: a slot
/// that began watching since has its flag set already).
CSTALLMONITOR_OWN_CODE static inline void CStallMonitor_wakeup_flags_note_slots(
    CStallMonitor_wakeup_flags *flags, uint64_t watchers) {
    uint64_t noted = 0;
    for (uint64_t left = watchers; left != 0; left &= left - 1) {
        int index = __builtin_ctzll(left);
        if (atomic_load(&flags->pending[index]) != 0) continue;
        atomic_store(&flags->pending[index], 1);
        noted |= 1ull << index;
    }
    if (noted != 0) noted &= atomic_load(&flags->armed);
    if (noted != 0) CStallMonitor_wakeup_post_parked(noted, flags->posts_late);
}

/// A producer's note: sets the flag of every watching slot whose flag is clear and posts those
/// whose probe armed the sleep and whose watchdog is parked. A flag already set costs a load and
/// nothing else: no store, no fence, no wake-up. Returns whether any slot watches.
CSTALLMONITOR_OWN_CODE static inline int CStallMonitor_wakeup_flags_note(CStallMonitor_wakeup_flags *flags) {
    uint64_t watchers = atomic_load_explicit(&flags->watching, memory_order_relaxed);
    if (watchers == 0) return 0;
    CStallMonitor_wakeup_flags_note_slots(flags, watchers);
    return 1;
}

#endif
