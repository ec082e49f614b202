import Glibc

/// How long a call took by its caller's own clock, read just around it, and whether the caller's
/// thread did anything there but the call's own sleep: it was preempted (its involuntary context
/// switches changed), or it slept more than once (its voluntary ones grew by more than the one
/// sleep of a blocking call: another wait in the window, such as an allocator's lock, or the call
/// restarted after a signal). That is the reference a recorder inside the call is checked
/// against. The call's interval lies inside the caller's, so a recorder never sees more; it sees
/// less by the few microseconds of the caller's own work, or by any time the thread was disturbed
/// outside the call. (A wait's own timeout is no reference: a semaphore's deadline is on the wall
/// clock, which a time daemon may step while the wait runs.)
package struct CallerClock: Sendable, CustomStringConvertible {
    /// The caller's monotonic clock around the call, in milliseconds.
    package var milliseconds: Double
    /// How the caller's thread was disturbed between the two clock reads ("preempted", "slept 2
    /// times"), nil when it was not.
    package var disturbance: String?

    /// Whether the caller's thread was disturbed between the two clock reads.
    package var disturbed: Bool { disturbance != nil }

    /// A reference read elsewhere (a host's printed line).
    package init(milliseconds: Double, disturbance: String?) {
        self.milliseconds = milliseconds
        self.disturbance = disturbance
    }

    /// What `begin()` read: the switches before the first clock read, and that clock.
    package typealias Begun = (switches: (involuntary: Int, voluntary: Int), start: UInt64)

    /// Starts the reference: the switches before the first clock read. (Begun and ended around
    /// the call in the caller's own function, no closure: the call's stack names the caller.)
    package static func begin() -> Begun { (switches(), monotonicNanoseconds()) }

    /// Ends it: the clock, then the switches; a call that sleeps once is not disturbed by it.
    package static func end(_ begun: Begun) -> CallerClock {
        let end = monotonicNanoseconds()
        let now = switches()
        let sleeps = now.voluntary - begun.switches.voluntary
        let disturbance =
            now.involuntary != begun.switches.involuntary || now.involuntary < 0
            ? "preempted" : sleeps > 1 ? "slept \(sleeps) times" : nil
        return CallerClock(milliseconds: Double(end - begun.start) / 1e6, disturbance: disturbance)
    }

    /// The slack ``admits(_:slack:)`` allows by default: 0.5 ms, or 2 ms in a process with a
    /// sanitizer runtime, whose instrumented code around the call (the wrappers' record among it)
    /// runs several times slower and faults in shadow memory on first touch, on no context switch
    /// the caller's clock can see (a 20 ms usleep was once recorded 1.27 ms shorter than its
    /// caller's clock under AddressSanitizer, on a loaded machine).
    package static let defaultSlack: Double = {
        let process = dlopen(nil, RTLD_NOW)
        let sanitized = dlsym(process, "__asan_init") != nil || dlsym(process, "__tsan_init") != nil
        return sanitized ? 2 : 0.5
    }()

    /// Whether a recorder inside the call may have measured `recorded` ms: not more than this
    /// clock (beyond 50 µs of the two clocks' difference), and not less by more than `slack` ms
    /// unless the thread was disturbed.
    package func admits(_ recorded: Double, slack: Double = CallerClock.defaultSlack) -> Bool {
        recorded <= milliseconds + 0.05 && (disturbed || milliseconds - recorded <= slack)
    }

    /// Whether a recorder inside a sleep of `requested` ms (a `usleep`, a `nanosleep`: the kernel
    /// sleeps at least that long on the monotonic clock) may have measured `recorded` ms: not less
    /// than the request (beyond 10 µs of rounding and the counter's rate), and not more than this
    /// clock (beyond 50 µs). No slack below the caller's clock: on a virtual machine the
    /// hypervisor can take the CPU from the thread between the call's return and the clock read
    /// (steal time, the eighth figure of `/proc/stat`'s cpu lines: 1443 s in 18.7 hours on the
    /// 2-core CI machine), which no context switch of the thread shows (a 20 ms `usleep` recorded
    /// 20.16 ms was 22.97 ms on its undisturbed caller's clock under AddressSanitizer).
    package func admits(_ recorded: Double, sleeping requested: Double) -> Bool {
        recorded >= requested - 0.01 && recorded <= milliseconds + 0.05
    }

    /// "12.3456 ms", with " (preempted)" or " (slept 2 times)" when it was disturbed.
    package var description: String { "\(milliseconds) ms" + (disturbance.map { " (\($0))" } ?? "") }

    /// The calling thread's involuntary and voluntary context switches (`getrusage(RUSAGE_THREAD)`;
    /// Glibc's module imports the constant without its name: 1), or -1 each.
    private static func switches() -> (involuntary: Int, voluntary: Int) {
        var usage = rusage()
        guard getrusage(__rusage_who_t(1), &usage) == 0 else { return (-1, -1) }
        return (usage.ru_nivcsw, usage.ru_nvcsw)
    }

    private static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
