/// Why an attempt at sampling a stuck thread gave no stack, as a report's `sampling.skipped`
/// counts it. Open: the report carries the raw value, and a report from another version may
/// carry reasons this one does not know.
struct SkipReason: OpenName {
    /// The name written in reports.
    var rawValue: String

    /// The sample was complete only after its span ended (or its loop went to wait).
    static let afterSpanEnd = SkipReason(rawValue: "afterSpanEnd")
    /// No unwinder loaded at all.
    static let noUnwinder = SkipReason(rawValue: "noUnwinder")
    /// Asleep in a syscall, but no snapshot unwinder (or no known stack) to unwind its copy.
    static let blockedWithoutLibdw = SkipReason(rawValue: "blockedWithoutLibdw")
    /// The thread ran while its stack was copied: the copy was discarded.
    static let threadMoved = SkipReason(rawValue: "threadMoved")
    /// The unwinder gave no stack.
    static let unwindFailed = SkipReason(rawValue: "unwindFailed")
    /// The sampling signal no longer runs the monitor's handler.
    static let signalTakenOver = SkipReason(rawValue: "signalTakenOver")
    /// A previous sampling request (or its handler) was still being answered.
    static let busy = SkipReason(rawValue: "busy")
    /// The thread blocks the sampling signal.
    static let signalBlocked = SkipReason(rawValue: "signalBlocked")
    /// An earlier sampling signal is still pending on the thread.
    static let signalPending = SkipReason(rawValue: "signalPending")
    /// Running, but maybe still finishing a syscall or waiting for a CPU: not signalled.
    static let notClearlyRunning = SkipReason(rawValue: "notClearlyRunning")
    /// The sampling signal could not be sent.
    static let sendFailed = SkipReason(rawValue: "sendFailed")
    /// The thread's /proc files could not be read.
    static let threadUnreadable = SkipReason(rawValue: "threadUnreadable")
    /// The watchdog never tracked the span (it got no CPU during it).
    static let watchdogStarved = SkipReason(rawValue: "watchdogStarved")
}
