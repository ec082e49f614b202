// The wrappers' clock: the counter clock (counter_clock.c) where it is usable, else CLOCK_MONOTONIC.
//
// A timed call reads the clock twice, and an event loop makes two or three timed socket calls per
// request (figure 11e: what watching blocking calls adds to a server's CPU per request). Ticks are
// converted to nanoseconds only for a call that passed the threshold in ticks. The host can ask
// for the kernel's clock for the wrappers alone (STALLMONITOR_BLOCKING_CLOCK=monotonic in the
// environment) or for every use of the counter (STALLMONITOR_CLOCK=monotonic).
#include "CStallMonitor.h"
#include "blocking.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

atomic_int cstallmonitor_blocking_uses_tsc;
_Atomic uint64_t cstallmonitor_blocking_threshold_ticks = 1000000;
/// Nanoseconds per tick as a 32.32 fixed-point number (0 while the counter is not used): the
/// counter clock's rate, kept here when the wrappers start so that a conversion on their path
/// never goes through CStallMonitor_counter_rate()'s pthread_once.
static _Atomic uint64_t nanoseconds_per_tick;

/// Whether the host asked for the kernel's clock for the wrappers (STALLMONITOR_BLOCKING_CLOCK=monotonic).
static int monotonic_asked(void) {
    const char *asked = getenv("STALLMONITOR_BLOCKING_CLOCK");
    return asked != NULL && strcmp(asked, "monotonic") == 0;
}

void cstallmonitor_blocking_clock_start(uint64_t threshold_ns) {
    uint64_t rate = monotonic_asked() ? 0 : CStallMonitor_counter_rate();
    if (rate == 0) {
        atomic_store(&cstallmonitor_blocking_threshold_ticks, threshold_ns);
        return;
    }
    // 1 % under the threshold: the rate's error never hides a call; `end` checks the nanoseconds.
    unsigned __int128 ticks = ((unsigned __int128)threshold_ns << 32) / rate;
    atomic_store(&nanoseconds_per_tick, rate);
    atomic_store(&cstallmonitor_blocking_threshold_ticks, (uint64_t)(ticks - ticks / 100));
    atomic_store(&cstallmonitor_blocking_uses_tsc, 1);
}

uint64_t cstallmonitor_blocking_ticks_to_ns(uint64_t ticks) {
    if (!atomic_load_explicit(&cstallmonitor_blocking_uses_tsc, memory_order_relaxed)) return ticks;
    uint64_t rate = atomic_load_explicit(&nanoseconds_per_tick, memory_order_relaxed);
    return (uint64_t)(((unsigned __int128)ticks * rate) >> 32);
}

int CStallMonitor_blocking_clock_is_tsc(void) { return atomic_load(&cstallmonitor_blocking_uses_tsc); }
