import CStallMonitor
import CoreFoundation
import Foundation
import StallReportKit
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
    private let probe: RunLoopProbe
    private let watchdog: Watchdog
    private let writer: ReportWriter
    private let errors: ErrorReporter
    private let counters: MonitorCounters
    private let stopped = Atomic<Bool>(false)

    /// Starts watching `loop` (the main run loop by default). Call from the loop's own thread when
    /// possible; otherwise the thread arms itself the next time its loop runs.
    public static func start(_ configuration: Configuration, loop: Loop = .main) throws(StallMonitorError) -> StallMonitor {
        try configuration.validate()
        try ReportFileStore.prepare(configuration.reportDirectory)
        let signal = try StackSampler.install(signal: configuration.signal)
        let runLoop: CFRunLoop = loop == .main ? CFRunLoopGetMain() : CFRunLoopGetCurrent()
        return StallMonitor(configuration: configuration, signal: signal, runLoop: runLoop)
    }

    private init(configuration: Configuration, signal: Int32, runLoop: CFRunLoop) {
        self.configuration = configuration
        self.signal = signal
        let threshold = configuration.threshold.nanoseconds
        let lead = UInt64(Double(threshold) * configuration.samplingLead)
        let wakeup = WakeupSignal()
        let tracker = SpanTracker(publishAfter: lead, reentryGrace: configuration.reentryGrace.nanoseconds, wakeup: wakeup)
        let counters = MonitorCounters()
        let errors = ErrorReporter(logger: configuration.logger)
        let writer = ReportWriter(
            builder: ReportBuilder(symbolicator: .shared, process: HostFacts.process(appVersion: configuration.appVersion), tags: configuration.tags),
            store: ReportFileStore(directory: configuration.reportDirectory),
            errors: errors, counters: counters, onReport: configuration.onReport)
        let thread = MonitoredThread(tracker: tracker, runLoop: runLoop)
        let watch = ThreadWatch(
            thread: thread,
            settings: .init(
                threshold: threshold, lead: lead, interval: configuration.samplingInterval.nanoseconds,
                sampleTimeout: configuration.sampleTimeout.nanoseconds, maxSamples: configuration.maxSamplesPerStall,
                maxFrames: configuration.maxFramesPerSample, reentryGrace: configuration.reentryGrace.nanoseconds,
                interruptSleepingSyscalls: configuration.interruptSleepingSyscalls, signal: signal),
            counters: counters,
            emit: { writer.submit($0) })
        self.thread = thread
        self.counters = counters
        self.errors = errors
        self.writer = writer
        self.watchdog = Watchdog(watches: [watch], wakeup: wakeup, counters: counters)
        self.probe = RunLoopProbe(runLoop: runLoop, tracker: tracker)

        let timeout = configuration.sampleTimeout.nanoseconds
        let maxFrames = configuration.maxFramesPerSample
        if CFRunLoopGetCurrent() === runLoop {
            thread.arm(signal: signal, sampleTimeout: timeout, maxFrames: maxFrames)
        } else {
            CFRunLoopPerformBlock(runLoop, kCFRunLoopCommonModes) {
                thread.arm(signal: signal, sampleTimeout: timeout, maxFrames: maxFrames)
            }
            CFRunLoopWakeUp(runLoop)
        }
        watchdog.start()
    }

    /// Stops watching: removes the observers, ends the watchdog thread, writes the reports still
    /// queued (waiting at most 5 s for the disk) and restores the previous signal disposition when
    /// no other monitor runs. Calling it again does nothing.
    public func stop() {
        guard !stopped.exchange(true, ordering: .sequentiallyConsistent) else { return }
        probe.remove()
        watchdog.stop()
        writer.flush(timeout: .seconds(5))
        StackSampler.uninstall()
    }

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
            errors: errors.counts,
            lastError: errors.last)
    }

    deinit {
        stop()
    }
}
