import CStallMonitor
import Foundation
import StallReportModel
import Synchronization

/// Watches a run loop and writes a JSON report for every awake span longer than the threshold,
/// with stack samples of the stuck thread.
///
/// ```swift
/// let monitor = try StallMonitor.start(.init(reportDirectory: URL(filePath: "stall-reports")))
/// RunLoop.main.run()
/// monitor.stop()
/// ```
public final class StallMonitor: Sendable {
    /// Which run loop to watch.
    public enum Loop: Sendable {
        /// The main thread's run loop.
        case main
        /// The run loop of the thread calling ``start(_:loop:)``.
        case current
    }

    /// What the monitor has seen and done so far.
    public struct Statistics: Sendable, Equatable {
        /// Awake spans the loop has had since the monitor started.
        public var spans: Int
        /// Spans that reached the sampling lead and were tracked by the watchdog.
        public var spansTracked: Int
        /// Tracked spans that ended below the threshold (their samples were discarded).
        public var shortSpansDiscarded: Int
        /// Spans longer than the threshold.
        public var stallsDetected: Int
        /// Reports written to disk.
        public var reportsWritten: Int
        /// Stack samples taken.
        public var samplesTaken: Int
        /// Samples whose signal was not answered in time.
        public var samplesTimedOut: Int
        /// Times the watchdog thread woke up.
        public var watchdogWakeups: Int
        /// `inProgress` report versions written while stalls lasted.
        public var inProgressWrites: Int
        /// Stalls not reported because a debugger was attached.
        public var discardedWhileDebugged: Int
        /// Spans not reported because the process was stopped for most of them.
        public var discardedProcessStopped: Int
        /// Spans not reported because they were declared long work or the monitor was paused.
        public var expectedLongWork: Int
        /// Final reports written in compact form because their fingerprint hit its rate limit.
        public var reportsRateLimited: Int
        /// Old reports deleted to stay within the directory quota.
        public var reportsDeletedForQuota: Int
        /// Spans past the sampling lead that ended while the watchdog thread got no CPU, more than
        /// 16 in a row, so the oldest were forgotten before it could check them: possibly stalls,
        /// not reported (the session record counts them as `watchdogStarved`).
        public var longSpansOverwritten: Int
        /// Stacks the watchdog took for samples (copying a blocked thread's stack, or signalling a
        /// running one for a snapshot) and unwound.
        public var watchdogStacks: Int
        /// Time the watchdog spent on those stacks, in nanoseconds: copy or signal round trip, and
        /// unwinding with libdw. Divided by ``watchdogStacks``, the cost of one sample off the
        /// monitored thread.
        public var watchdogStackNanoseconds: Int
        /// Errors by kind (e.g. `reportWrite`).
        public var errors: [String: Int]
        /// The most recent error.
        public var lastError: StallMonitorError?
    }

    /// The configuration the monitor runs with.
    public let configuration: Configuration
    /// The real-time signal used to sample the stuck thread.
    public let signal: Int32

    private let thread: MonitoredThread
    private let probe: any LoopProbe
    private let watchdog: Watchdog
    private let writer: ReportWriter
    private let errors: ErrorReporter
    private let counters: MonitorCounters
    private let controls: MonitorControls
    private let session: SessionRecorder
    /// Rewrites the session record every ``Configuration/sessionHeartbeatInterval``.
    private let heartbeat: RepeatingTimer
    private let stopped = Atomic<Bool>(false)
    /// The process that started the monitor: a forked child has no watchdog or writer threads.
    private let ownerPID = getpid()

    /// Starts watching `loop` (the main run loop by default). Call from the loop's own thread when
    /// possible; otherwise the thread arms itself the next time its loop runs.
    public static func start(_ configuration: Configuration, loop: Loop = .main) throws(StallMonitorError) -> StallMonitor {
        try configuration.validate()
        try ReportFileStore.prepare(configuration.reportDirectory)
        let signal = try StackSampler.install(signal: configuration.signal)
        return StallMonitor(configuration: configuration, signal: signal, probe: RunLoopProbe(loop))
    }

    private init(configuration: Configuration, signal: Int32, probe: any LoopProbe) {
        self.configuration = configuration
        self.signal = signal
        let threshold = configuration.threshold.nanoseconds
        let lead = UInt64(Double(threshold) * configuration.samplingLead)
        let wakeup = WakeupSignal()
        let tracker = SpanTracker(publishAfter: lead, reentryGrace: configuration.reentryGrace.nanoseconds, wakeup: wakeup)
        let counters = MonitorCounters()
        let errors = ErrorReporter(logger: configuration.logger, interval: configuration.logInterval)
        let controls = MonitorControls()
        let process = HostFacts.process(appVersion: configuration.appVersion)
        let store = ReportFileStore(directory: configuration.reportDirectory)
        let session = SessionRecorder(
            store: store, process: process, thresholdMs: Double(threshold) / 1e6, errors: errors,
            sample: { Self.sessionCounts(tracker: tracker, counters: counters, errors: errors) })
        let writer = ReportWriter(
            builder: ReportBuilder(symbolicator: .shared, process: process, tags: configuration.tags,
                                   symbolicateInProcess: configuration.symbolicateInProcess),
            store: store, errors: errors, counters: counters,
            limiter: FingerprintRateLimiter(limit: configuration.maxReportsPerFingerprint, window: configuration.rateLimitWindow.nanoseconds),
            quota: ReportQuota(directory: configuration.reportDirectory, maxFiles: configuration.maxReportFiles,
                               maxBytes: configuration.maxReportBytes, counters: counters, errors: errors),
            session: session, onReport: configuration.onReport)
        let thread = MonitoredThread(tracker: tracker, loopKind: probe.kind)
        let watch = ThreadWatch(
            thread: thread,
            settings: .init(
                threshold: threshold, lead: lead, interval: configuration.samplingInterval.nanoseconds,
                sampleTimeout: configuration.sampleTimeout.nanoseconds, maxSamples: configuration.maxSamplesPerStall,
                maxFrames: configuration.maxFramesPerSample, reentryGrace: configuration.reentryGrace.nanoseconds,
                unwinding: configuration.unwinding, stackCopyBytes: configuration.stackCopyBytes, signal: signal,
                inProgressRefresh: configuration.inProgressRefresh.nanoseconds,
                reportWhileDebugged: configuration.reportWhileDebugged),
            counters: counters, controls: controls,
            emit: { writer.submit($0) })
        self.thread = thread
        self.counters = counters
        self.errors = errors
        self.controls = controls
        self.writer = writer
        self.session = session
        // Waking a threshold (at least 250 ms) late means the whole process was stopped.
        self.watchdog = Watchdog(watches: [watch], wakeup: wakeup, counters: counters, stoppedAfter: max(threshold, 250_000_000))
        self.probe = probe
        let timeout = configuration.sampleTimeout.nanoseconds
        let maxFrames = configuration.maxFramesPerSample
        let report: @Sendable (String) -> Void = { errors.report(.threadArming($0)) }
        probe.attach(to: tracker) {
            thread.arm(signal: signal, sampleTimeout: timeout, maxFrames: maxFrames, report: report)
        }
        Symbolicator.shared.retain()
        SnapshotUnwinder.shared.retain()
        watchdog.start()
        let sweeper = StaleReportSweeper(store: store, hostName: process.hostName, errors: errors)
        writer.perform {
            session.heartbeat()
            sweeper.sweep()
        }
        heartbeat = writer.repeating(every: configuration.sessionHeartbeatInterval) { session.heartbeat() }
    }

    private static func sessionCounts(tracker: SpanTracker, counters: MonitorCounters, errors: ErrorReporter)
        -> (spans: Int, stalls: Int, written: Int, dropped: [String: Int]) {
        var dropped = errors.counts.filter { $0.key == "reportWrite" || $0.key == "reportEncoding" }
        let rateLimited = counters.reportsRateLimited.load(ordering: .relaxed)
        let quota = counters.reportsDeletedForQuota.load(ordering: .relaxed)
        if rateLimited > 0 { dropped["rateLimitedToSummary"] = rateLimited }
        if quota > 0 { dropped["deletedForQuota"] = quota }
        let overwritten = counters.longSpansOverwritten.load(ordering: .relaxed)
        if overwritten > 0 { dropped["watchdogStarved"] = overwritten }
        return (Int(tracker.currentSpan().sequence), counters.stallsDetected.load(ordering: .relaxed),
                counters.reportsWritten.load(ordering: .relaxed), dropped)
    }

    /// Stops watching: removes the observers, ends the watchdog thread, writes the reports still
    /// queued (waiting at most 5 s for the disk) and, when no other monitor runs, restores the
    /// previous signal disposition and closes the symbolication session (its files and memory).
    /// Calling it again does nothing.
    public func stop() {
        guard let shutdown = beginStop() else { return }
        shutdown.finish()
    }

    /// Marks the monitor stopped and removes its observers; returns what is left to shut down
    /// (nil when it was stopped already, or in a forked child).
    private func beginStop() -> Shutdown? {
        guard !stopped.exchange(true, ordering: .sequentiallyConsistent) else { return nil }
        probe.detach()
        // In a forked child only the calling thread exists: there is no watchdog to join and no
        // writer to flush. Leave the inherited handler in place; nothing sends it here.
        guard getpid() == ownerPID else { return nil }
        return Shutdown(watchdog: watchdog, heartbeat: heartbeat, session: session, writer: writer)
    }

    /// The blocking part of stopping: joins the watchdog, writes what is queued, then releases
    /// the process-wide parts (signal disposition, libdw sessions) when no other monitor runs.
    private struct Shutdown: Sendable {
        let watchdog: Watchdog
        let heartbeat: RepeatingTimer
        let session: SessionRecorder
        let writer: ReportWriter

        func finish() {
            watchdog.stop()
            heartbeat.cancel()
            let session = self.session
            writer.perform { session.heartbeat(stopping: true) }
            writer.flush(timeout: .seconds(5))
            StackSampler.uninstall()
            Symbolicator.shared.release()
            SnapshotUnwinder.shared.release()
        }
    }

    /// Stops reporting until ``resume()`` (calls nest). A span open while paused is never
    /// reported, even if it goes on after `resume()`. Callable from any thread.
    public func pause() {
        controls.pauseDepth.add(1, ordering: .releasing)
    }

    /// Undoes one ``pause()``. A `resume()` without a `pause()` to undo does nothing and returns
    /// false (it used to make the next `pause()` ineffective).
    @discardableResult
    public func resume() -> Bool {
        var depth = controls.pauseDepth.load(ordering: .relaxed)
        while depth > 0 {
            let (exchanged, original) = controls.pauseDepth.compareExchange(
                expected: depth, desired: depth - 1, successOrdering: .releasing, failureOrdering: .relaxed)
            if exchanged { return true }
            depth = original
        }
        return false
    }

    /// Runs `body` with the monitor paused (``pause()`` before, ``resume()`` after, also when it
    /// throws). Callable from any thread.
    public func whilePaused<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        pause()
        defer { resume() }
        return try body()
    }

    /// Runs `body`, known to be long work (e.g. loading a document the user asked for), on the
    /// monitored thread without it being reported as a stall. Call it on the monitored thread.
    public func expectLongWork<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        thread.tracker.markExpectedLongWork()
        defer { thread.tracker.markExpectedLongWork() }
        return try body()
    }

    /// The host app's current scene (screen, request, test name), copied into reports of stalls
    /// that begin while it is set. Callable from any thread.
    public var scene: String? {
        get { controls.scene }
        set { controls.scene = newValue }
    }

    /// The session record file of this monitor, next to the reports.
    public var sessionRecordURL: URL { session.url }

    /// Waits until reports of stalls already detected are on disk, at most `timeout`.
    /// Returns false on timeout.
    @discardableResult
    public func flush(timeout: Duration = .seconds(5)) -> Bool {
        writer.flush(timeout: timeout)
    }

    /// What the monitor has seen and done so far.
    public var statistics: Statistics {
        Statistics(
            spans: Int(thread.tracker.currentSpan().sequence),
            spansTracked: counters.spansTracked.load(ordering: .relaxed),
            shortSpansDiscarded: counters.shortSpansDiscarded.load(ordering: .relaxed),
            stallsDetected: counters.stallsDetected.load(ordering: .relaxed),
            reportsWritten: counters.reportsWritten.load(ordering: .relaxed),
            samplesTaken: counters.samplesTaken.load(ordering: .relaxed),
            samplesTimedOut: counters.samplesTimedOut.load(ordering: .relaxed),
            watchdogWakeups: counters.watchdogWakeups.load(ordering: .relaxed),
            inProgressWrites: counters.inProgressWrites.load(ordering: .relaxed),
            discardedWhileDebugged: counters.discardedWhileDebugged.load(ordering: .relaxed),
            discardedProcessStopped: counters.discardedProcessStopped.load(ordering: .relaxed),
            expectedLongWork: counters.expectedLongWork.load(ordering: .relaxed),
            reportsRateLimited: counters.reportsRateLimited.load(ordering: .relaxed),
            reportsDeletedForQuota: counters.reportsDeletedForQuota.load(ordering: .relaxed),
            longSpansOverwritten: counters.longSpansOverwritten.load(ordering: .relaxed),
            watchdogStacks: counters.stacksTaken.load(ordering: .relaxed),
            watchdogStackNanoseconds: counters.stackNanoseconds.load(ordering: .relaxed),
            errors: errors.counts,
            lastError: errors.last)
    }

    /// A monitor released without ``stop()`` stops without blocking the releasing thread (which
    /// may be a cooperative thread or the loop itself): the observers are removed at once, and
    /// the watchdog's end and the writing of queued reports finish on a thread of their own.
    deinit {
        guard let shutdown = beginStop() else { return }
        let thread = Thread { shutdown.finish() }
        thread.name = "StallMonitor.shutdown"
        thread.start()
    }
}
