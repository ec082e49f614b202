// The watchdog's wake-up slots: semaphores in static storage (never destroyed, so a producer that
// read a slot just before it was released posts into valid memory), each with a parked bit.
//
// A producer (the pool's enqueue hook, a watched event loop's return from epoll_wait) and a
// watchdog about to sleep form a Dekker pair on sequentially consistent atomics: the producer sets
// its own flag, then reads the parked bits; the watchdog sets its parked bit, then takes the
// producers' flags. At least one of them sees the other, so work either keeps the watchdog from
// sleeping or wakes it.
#include "CStallMonitor.h"
#include "own_code.h"
#include "wakeup.h"

#include <semaphore.h>
#include <stdatomic.h>

static struct {
    atomic_int used;
    atomic_int initialized;
    sem_t semaphore;
} slots[CStallMonitor_wakeup_slot_count];

CStallMonitor_wakeup_flags CStallMonitor_wakeup_producer_flags[CStallMonitor_wakeup_producer_count];

/// Clears every producer's flag and watch bit for the slot (a slot taken or given back).
static void reset_producer_flags(int slot) {
    for (int producer = 0; producer < CStallMonitor_wakeup_producer_count; producer++) {
        CStallMonitor_wakeup_flags_reset(&CStallMonitor_wakeup_producer_flags[producer], slot);
    }
}

/// Slots whose watchdog sleeps until a producer posts it, and when each was last posted.
static _Atomic uint64_t parked;
static _Atomic uint64_t posted_at[CStallMonitor_wakeup_slot_count];

int CStallMonitor_wakeup_slot_acquire(void) {
    for (int index = 0; index < CStallMonitor_wakeup_slot_count; index++) {
        int free_slot = 0;
        if (!atomic_compare_exchange_strong(&slots[index].used, &free_slot, 1)) continue;
        if (atomic_load(&slots[index].initialized)) {
            while (sem_trywait(&slots[index].semaphore) == 0) {}  // posts meant for its last owner
        } else {
            sem_init(&slots[index].semaphore, 0, 0);
            atomic_store(&slots[index].initialized, 1);
        }
        reset_producer_flags(index);
        return index;
    }
    return -1;
}

void CStallMonitor_wakeup_slot_release(int slot) {
    if (slot < 0 || slot >= CStallMonitor_wakeup_slot_count) return;
    reset_producer_flags(slot);
    atomic_fetch_and(&parked, ~(1ull << slot));
    atomic_store(&slots[slot].used, 0);
}

sem_t *CStallMonitor_wakeup_slot_semaphore(int slot) {
    return &slots[slot].semaphore;
}

void CStallMonitor_wakeup_slot_park(int slot) {
    if (slot < 0 || slot >= CStallMonitor_wakeup_slot_count) return;
    atomic_fetch_or(&parked, 1ull << slot);
}

void CStallMonitor_wakeup_slot_unpark(int slot) {
    if (slot < 0 || slot >= CStallMonitor_wakeup_slot_count) return;
    atomic_fetch_and(&parked, ~(1ull << slot));
}

CSTALLMONITOR_OWN_CODE void CStallMonitor_wakeup_post_parked(uint64_t noted) {
    uint64_t sleeping = atomic_load(&parked) & noted;
    if (sleeping == 0) return;
    sleeping &= atomic_fetch_and(&parked, ~sleeping);
    uint64_t now = CStallMonitor_monotonic_ns();
    for (; sleeping != 0; sleeping &= sleeping - 1) {
        int index = __builtin_ctzll(sleeping);
        atomic_store(&posted_at[index], now);
        sem_post(&slots[index].semaphore);
    }
}

uint64_t CStallMonitor_wakeup_slot_posted_at(int slot) {
    if (slot < 0 || slot >= CStallMonitor_wakeup_slot_count) return 0;
    return atomic_load(&posted_at[slot]);
}
