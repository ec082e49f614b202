import Synchronization

/// Counters shared by the watchdog, the writer and the public statistics.
final class MonitorCounters: Sendable {
    /// Spans the monitor's own loops have begun, as the watchdog last saw them: brought up to
    /// date at each of its looks and once more when it stops (the session record's `spans`).
    let spansBegun = Atomic<Int>(0)
    let spansTracked = Atomic<Int>(0)
    let shortSpansDiscarded = Atomic<Int>(0)
    let stallsDetected = Atomic<Int>(0)
    let reportsWritten = Atomic<Int>(0)
    let samplesTaken = Atomic<Int>(0)
    let samplesTimedOut = Atomic<Int>(0)
    let watchdogWakeups = Atomic<Int>(0)
    let discardedWhileDebugged = Atomic<Int>(0)
    let discardedProcessStopped = Atomic<Int>(0)
    let expectedLongWork = Atomic<Int>(0)
    let reportsRateLimited = Atomic<Int>(0)
    let reportsDeletedForQuota = Atomic<Int>(0)
    /// Long spans that ended while the watchdog got no CPU and were overwritten in the
    /// ``EndedSpanLog`` before it looked: possibly stalls, never reported.
    let longSpansOverwritten = Atomic<Int>(0)
    let inProgressWrites = Atomic<Int>(0)
    /// Stacks the watchdog took (a blocked thread's copy, or a running thread's snapshot) and the
    /// time that took it, unwinding included.
    let stacksTaken = Atomic<Int>(0)
    let stackNanoseconds = Atomic<Int>(0)
    /// Times the concurrency pool was starved (no new job for longer than the threshold).
    let poolStarvations = Atomic<Int>(0)
    /// Whether the host's takeover of the sampling signal was said (once per monitor).
    let signalTakenOverSaid = Atomic<Bool>(false)
    /// Whether a watched thread's exit during a span was said (once per monitor).
    let threadExitSaid = Atomic<Bool>(false)
}
