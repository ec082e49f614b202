// The counter clock: the CPU's time-stamp counter, where the kernel keeps its own time with it.
//
// CLOCK_MONOTONIC through the vDSO costs about 20 ns on the development machine (a serialized
// counter read, the kernel's sequence lock and a conversion); the counter itself about 9 ns. Hot
// paths that read a clock once or twice per operation (a blocking-call wrapper, a run loop's
// observers around every wait) read the counter and convert only the readings that matter. The
// counter is used only where it is as good a clock as the kernel's: the kernel's clocksource is
// "tsc" (the kernel checked that it is invariant and synchronized across CPUs), this thread may
// read it (PR_GET_TSC), and the host did not ask for the kernel's clock
// (STALLMONITOR_CLOCK=monotonic in the environment). Its rate is measured against CLOCK_MONOTONIC
// between this library's load and the first use (at least 2 ms apart: the first caller sleeps the
// rest when it came sooner).
#include "CStallMonitor.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/// Nanoseconds per tick as a 32.32 fixed-point number (0: the counter is not used).
static _Atomic uint64_t nanoseconds_per_tick;
static pthread_once_t calibration = PTHREAD_ONCE_INIT;

#if defined(__x86_64__)
/// A counter reading and the CLOCK_MONOTONIC time taken between two readings of it.
struct clock_pair {
    uint64_t ticks, nanoseconds;
};

static struct clock_pair at_load;
static atomic_int load_pair_taken;

/// Whether this thread may read the counter and the host did not ask for the kernel's clock.
static int counter_readable(void) {
    const char *asked = getenv("STALLMONITOR_CLOCK");
    if (asked != NULL && strcmp(asked, "monotonic") == 0) return 0;
    int mode = 0;
    return prctl(PR_GET_TSC, &mode, 0, 0, 0) == 0 && mode == PR_TSC_ENABLE;
}

/// Whether the kernel keeps time with the counter.
static int kernel_uses_counter(void) {
    int file = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
    if (file < 0) return 0;
    char name[16] = {0};
    ssize_t length = read(file, name, sizeof name - 1);
    close(file);
    return length == 4 && memcmp(name, "tsc\n", 4) == 0;
}

/// The closest pair of five: the counter read on both sides of the clock, its midpoint kept.
static struct clock_pair take_pair(void) {
    struct clock_pair best = {0, 0};
    uint64_t narrowest = UINT64_MAX;
    for (int attempt = 0; attempt < 5; attempt++) {
        uint64_t before = __builtin_ia32_rdtsc();
        uint64_t nanoseconds = CStallMonitor_monotonic_ns();
        uint64_t after = __builtin_ia32_rdtsc();
        if (after < before || after - before >= narrowest) continue;
        narrowest = after - before;
        best = (struct clock_pair){before + (after - before) / 2, nanoseconds};
    }
    return best;
}

__attribute__((constructor)) static void take_load_pair(void) {
    int mode = 0;
    if (prctl(PR_GET_TSC, &mode, 0, 0, 0) != 0 || mode != PR_TSC_ENABLE) return;
    at_load = take_pair();
    atomic_store(&load_pair_taken, 1);
}
#endif

/// Measures the counter's rate (once: a second thread asking at the same time waits for it, so
/// the rate never changes under a reading).
static void calibrate(void) {
#if defined(__x86_64__)
    if (!atomic_load(&load_pair_taken) || !counter_readable() || !kernel_uses_counter()) return;
    enum { shortest_interval_ns = 2000000 };
    uint64_t elapsed = CStallMonitor_monotonic_ns() - at_load.nanoseconds;
    if (elapsed < shortest_interval_ns) {
        struct timespec rest = {0, (long)(shortest_interval_ns - elapsed)};
        while (nanosleep(&rest, &rest) != 0) {}
    }
    struct clock_pair now = take_pair();
    if (now.ticks <= at_load.ticks || now.nanoseconds <= at_load.nanoseconds) return;
    unsigned __int128 rate =
        ((unsigned __int128)(now.nanoseconds - at_load.nanoseconds) << 32) / (now.ticks - at_load.ticks);
    // A counter between 100 MHz and 10 GHz, else the measurement went wrong: keep the kernel's clock.
    if (rate < ((uint64_t)1 << 32) / 10 || rate > ((uint64_t)1 << 32) * 10) return;
    atomic_store(&nanoseconds_per_tick, (uint64_t)rate);
#endif
}

uint64_t CStallMonitor_counter_rate(void) {
    pthread_once(&calibration, calibrate);
    return atomic_load(&nanoseconds_per_tick);
}
