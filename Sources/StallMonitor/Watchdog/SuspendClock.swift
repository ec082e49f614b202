import Glibc

/// How long the machine has been suspended since boot: `CLOCK_BOOTTIME` − `CLOCK_MONOTONIC`. Both
/// count from boot, but only `CLOCK_BOOTTIME` goes on while the machine sleeps.
///
/// Spans are measured on `CLOCK_MONOTONIC`, so time the machine spent suspended never makes a
/// span longer; a rise of this value while a stall is tracked says the stall spanned a suspend,
/// and the report carries it as `machineSuspendedMs`.
enum SuspendClock {
    /// Nanoseconds the machine has spent suspended since boot (0 when a clock is unavailable).
    static func suspendedNanos() -> UInt64 {
        var boot = timespec()
        var monotonic = timespec()
        guard clock_gettime(CLOCK_BOOTTIME, &boot) == 0, clock_gettime(CLOCK_MONOTONIC, &monotonic) == 0 else {
            return 0
        }
        let bootNanos = UInt64(boot.tv_sec) * 1_000_000_000 + UInt64(boot.tv_nsec)
        let monotonicNanos = UInt64(monotonic.tv_sec) * 1_000_000_000 + UInt64(monotonic.tv_nsec)
        return bootNanos > monotonicNanos ? bootNanos - monotonicNanos : 0
    }
}
