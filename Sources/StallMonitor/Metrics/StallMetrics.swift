import CoreMetrics
import Glibc
import StallReportModel

/// The monitor's swift-metrics (names and meaning: the table in the Metrics article). Everything here
/// runs on the watchdog or the writer queue, never on a monitored thread: a loop thread only
/// stores atomics (``SpanTracker``), which these read.
///
/// - `<prefix>.stall.duration` (Timer, seconds) and `<prefix>.stalls` (Counter): once per stall
///   whose final report is made, by loop and classification.
/// - `<prefix>.reports.dropped` (Counter, by `reason`): stalls not reported in full, following the
///   session record's `reportsDropped` and the statistics' discard counts.
/// - `<prefix>.loop.time` (FloatingPointCounter, seconds, by `loop.state` active/idle) and
///   `<prefix>.loop.utilization` (Gauge, 0…1): the share of time each loop was awake, emitted with
///   each session heartbeat and when the monitor stops.
/// - `<prefix>.pool.delay` (Timer, nanoseconds): how long a block queued on the Swift concurrency
///   pool waited before a worker started it (Node's event-loop delay, for the pool), one value per
///   look while the pool is busy (``StallMonitor/Loop/concurrencyPool``).
/// - `<prefix>.blocking.duration` (Timer, by `loop.kind` and `call`): each blocking call on a
///   thread that must not block, when ``StallMonitor/Configuration/blockingCalls`` is set.
package final class StallMetrics: Sendable {
    /// Why a stall was not reported in full: the `reason` dimension, and where its count comes from.
    enum DropReason: String, CaseIterable {
        /// Written as a compact report (no samples): its fingerprint hit `maxReportsPerFingerprint`.
        case rateLimitedToSummary
        /// An older report deleted to stay within the directory quota.
        case deletedForQuota
        /// A report (or the session record) could not be written.
        case reportWrite
        /// A report could not be encoded.
        case reportEncoding
        /// Long spans that ended while the watchdog got no CPU and were forgotten before it looked.
        case watchdogStarved
        /// A stall while a debugger was attached (`reportWhileDebugged` off).
        case debuggerAttached
        /// A span longer than the threshold only because the process was stopped meanwhile.
        case processStopped
    }

    /// Per loop: when its times were last emitted and its awake time then.
    private struct LoopState {
        var at: UInt64
        var awake: UInt64
        var active: FloatingPointCounter
        var idle: FloatingPointCounter
        var utilization: Gauge
    }

    private let factory: any MetricsFactory
    private let prefix: String
    private let dimensions: [(String, String)]
    private let dropped: [DropReason: MonotonicCounter]
    private let startedAt: UInt64
    /// The duration timer and counter of one set of stall dimensions. (A struct, not a labelled
    /// tuple, for the reason given at ``MonitoredThread``'s workers.)
    private struct StallPair {
        var timer: CoreMetrics.Timer
        var counter: Counter
    }

    private let stallMetrics = Locked<[String: StallPair]>([:])
    /// Made at the first pool delay (a monitor that does not watch the pool has none).
    private let poolDelay = Locked<CoreMetrics.Timer?>(nil)

    /// Records one enqueue-to-start delay of the concurrency pool (watchdog thread).
    func recordPoolDelay(nanoseconds: UInt64) {
        let timer = poolDelay.withLock { timer in
            if timer == nil {
                timer = CoreMetrics.Timer(label: "\(prefix).pool.delay", dimensions: dimensions, factory: factory)
            }
            return timer!
        }
        timer.recordNanoseconds(Int64(clamping: nanoseconds))
    }
    /// Blocking-call timers, by loop kind and call (both bounded: a few kinds, 47 calls).
    private let blockingTimers = Locked<[String: CoreMetrics.Timer]>([:])

    /// Records one blocking call on a thread that must not block (writer queue).
    func recordBlockingCall(loopKind: String, call: String, nanoseconds: UInt64) {
        let key = loopKind + "\u{1}" + call
        let timer = blockingTimers.withLock { made in
            if let existing = made[key] { return existing }
            let timer = CoreMetrics.Timer(
                label: "\(prefix).blocking.duration",
                dimensions: dimensions + [("loop.kind", loopKind), ("call", call)],
                preferredDisplayUnit: .milliseconds, factory: factory)
            made[key] = timer
            return timer
        }
        timer.recordNanoseconds(Int64(clamping: nanoseconds))
    }
    private let loops = Locked<[Int: LoopState]>([:])

    /// Makes the metrics with `options` (the global factory when it names none); loop times are
    /// counted from `startedAt` (monotonic nanoseconds).
    init(options: StallMonitor.MetricsOptions, startedAt: UInt64) {
        let factory = options.factory ?? MetricsSystem.factory
        self.factory = factory
        self.prefix = options.labelPrefix
        self.dimensions = options.dimensions
        self.startedAt = startedAt
        var dropped: [DropReason: MonotonicCounter] = [:]
        for reason in DropReason.allCases {
            // Made at start, so every reason shows (at 0) before the first drop.
            dropped[reason] = MonotonicCounter(
                Counter(
                    label: "\(options.labelPrefix).reports.dropped",
                    dimensions: options.dimensions + [("reason", reason.rawValue)], factory: factory))
        }
        self.dropped = dropped
    }

    /// The `loop.name` dimension, which names the loop, never a thread: `main` for the main
    /// thread's run loop and for the MainActor (the main queue, drained by any Dispatch worker),
    /// `pool` for the concurrency pool (one pool, whichever worker stalled), else the loop thread's
    /// name (an event loop's `NIO-ELT-0-#1`): bounded by the loops the app runs.
    package static func loopName(kind: String, threadName: String, isMainThread: Bool) -> String {
        switch kind {
        case LoopKind.mainActor.rawValue: "main"
        case LoopKind.concurrencyPool.rawValue: "pool"
        default: isMainThread ? "main" : threadName
        }
    }

    // MARK: Stalls (writer queue)

    /// One stall whose final report was made: its duration and count, by loop and classification.
    func recordStall(_ report: StallReport) {
        let dims =
            dimensions + [
                ("loop.kind", report.loop.kind),
                (
                    "loop.name",
                    Self.loopName(
                        kind: report.loop.kind, threadName: report.loop.threadName,
                        isMainThread: report.loop.isMainThread)
                ),
                ("classification", report.classification.rawValue),
            ]
        let key = dims.map { "\($0.0)=\($0.1)" }.joined(separator: "\u{1}")
        let pair = stallMetrics.withLock { made in
            if let existing = made[key] { return existing }
            let pair = StallPair(
                timer: CoreMetrics.Timer(
                    label: "\(prefix).stall.duration", dimensions: dims, preferredDisplayUnit: .seconds,
                    factory: factory),
                counter: Counter(label: "\(prefix).stalls", dimensions: dims, factory: factory))
            made[key] = pair
            return pair
        }
        let nanos = report.durationMs * 1e6
        pair.timer.recordNanoseconds(nanos.isFinite && nanos > 0 ? Int64(min(nanos, Double(Int64.max))) : 0)
        pair.counter.increment()
    }

    // MARK: Dropped reports (watchdog or writer)

    /// Brings the dropped counters up to date with the monitor's counts; `errors` (the write and
    /// encoding failures) only on the writer queue, the rest from anywhere.
    func syncDropped(_ counters: MonitorCounters, errors: [String: Int]? = nil) {
        dropped[.rateLimitedToSummary]?.sync(to: counters.reportsRateLimited.load(ordering: .relaxed))
        dropped[.deletedForQuota]?.sync(to: counters.reportsDeletedForQuota.load(ordering: .relaxed))
        dropped[.watchdogStarved]?.sync(to: counters.longSpansOverwritten.load(ordering: .relaxed))
        dropped[.debuggerAttached]?.sync(to: counters.discardedWhileDebugged.load(ordering: .relaxed))
        dropped[.processStopped]?.sync(to: counters.discardedProcessStopped.load(ordering: .relaxed))
        if let errors {
            dropped[.reportWrite]?.sync(to: errors[StallMonitorError.Code.reportWrite.name] ?? 0)
            dropped[.reportEncoding]?.sync(to: errors[StallMonitorError.Code.reportEncoding.name] ?? 0)
        }
    }

    // MARK: Loop time (writer queue: each heartbeat, and at stop)

    /// Adds each armed loop's awake (`active`) and other (`idle`) time since the last call (or the
    /// start) and sets its utilisation over that interval.
    func emitLoopTime(_ threads: [MonitoredThread], now: UInt64) {
        for (index, thread) in threads.enumerated() {
            let tid = thread.armedTID.load(ordering: .acquiring)
            // A shared loop's slots are not loops of their own (the pool's delay is `pool.delay`).
            guard tid != 0, thread.probe.sharedLoop == nil else { continue }
            let awakeNow = thread.tracker.awakeNanos(now: now)
            loops.withLock { loops in
                var state = loops[index] ?? makeLoopState(thread: thread, tid: tid)
                guard now > state.at else { return }
                let elapsed = now - state.at
                // Never backwards: a read racing a span's end may have counted it early once.
                let awake = min(awakeNow > state.awake ? awakeNow - state.awake : 0, elapsed)
                state.active.increment(by: Double(awake) / 1e9)
                state.idle.increment(by: Double(elapsed - awake) / 1e9)
                state.utilization.record(Double(awake) / Double(elapsed))
                state.at = now
                state.awake = max(state.awake, awakeNow)
                loops[index] = state
            }
        }
    }

    private func makeLoopState(thread: MonitoredThread, tid: Int32) -> LoopState {
        let name = Self.loopName(
            kind: thread.loopKind.rawValue, threadName: ThreadProcFiles.threadName(tid: tid),
            isMainThread: tid == getpid())
        let dims = dimensions + [("loop.kind", thread.loopKind.rawValue), ("loop.name", name)]
        return LoopState(
            at: startedAt, awake: 0,
            active: FloatingPointCounter(
                label: "\(prefix).loop.time", dimensions: dims + [("loop.state", "active")], factory: factory),
            idle: FloatingPointCounter(
                label: "\(prefix).loop.time", dimensions: dims + [("loop.state", "idle")], factory: factory),
            utilization: Gauge(label: "\(prefix).loop.utilization", dimensions: dims, factory: factory))
    }
}
