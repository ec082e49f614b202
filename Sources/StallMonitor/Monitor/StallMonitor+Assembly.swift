import CStallMonitor
import StallReportModel

/// The parts a monitor is assembled from, made by its initializer.
extension StallMonitor {
    /// One monitored thread per probe, each with a span tracker that wakes the watchdog.
    static func makeThreads(
        probes: [any LoopProbe], configuration: Configuration, lead: UInt64,
        wakeup: WakeupSignal
    ) -> [MonitoredThread] {
        probes.map { (probe: any LoopProbe) -> MonitoredThread in
            // A pull probe feeds its tracker from the watchdog and passes the loop thread's counts
            // itself: the calling thread's (the watchdog's) are not read.
            var switches: @Sendable () -> UInt64 = { CStallMonitor_thread_voluntary_switches() }
            var idleYields: @Sendable () -> UInt64 = { CStallMonitor_loop_idle_yields() }
            if probe is any PolledLoopProbe {
                switches = { 0 }
                idleYields = { 0 }
            }
            let tracker = SpanTracker(
                publishAfter: lead, reentryGrace: configuration.reentryGrace.nanoseconds, wakeup: wakeup,
                counterRate: probe.stampsWithCounter ? CStallMonitor_counter_rate() : 0,
                voluntarySwitches: switches, idleYields: idleYields)
            return MonitoredThread(tracker: tracker, probe: probe, workers: probe.armedWorkers ?? Locked([:]))
        }
    }

    /// The writer of the monitor's reports.
    static func makeWriter(
        configuration: Configuration, process: StallReport.Process, store: ReportFileStore,
        errors: ErrorReporter, counters: MonitorCounters, session: SessionRecorder,
        metrics: StallMetrics
    ) -> ReportWriter {
        ReportWriter(
            builder: ReportBuilder(
                symbolicator: MonitorProcess.shared.symbolicator, process: process, tags: configuration.tags,
                symbolicateInProcess: configuration.symbolicateInProcess),
            store: store, errors: errors, counters: counters,
            limiter: FingerprintRateLimiter(
                limit: configuration.maxReportsPerFingerprint, window: configuration.rateLimitWindow.nanoseconds),
            session: session, metrics: metrics, onReport: configuration.onReport)
    }

    /// The settings every watch samples and reports stalls with (and the pool's starvation report).
    static func watchSettings(
        configuration: Configuration, threshold: UInt64, lead: UInt64, signal: Int32
    ) -> ThreadWatch.Settings {
        ThreadWatch.Settings(
            threshold: threshold, lead: lead, interval: configuration.samplingInterval.nanoseconds,
            sampleTimeout: configuration.sampleTimeout.nanoseconds, maxSamples: configuration.maxSamplesPerStall,
            maxFrames: configuration.maxFramesPerSample, reentryGrace: configuration.reentryGrace.nanoseconds,
            unwinding: configuration.unwinding, symbolicateInProcess: configuration.symbolicateInProcess,
            stackCopyBytes: configuration.stackCopyBytes, signal: signal,
            inProgressRefresh: configuration.inProgressRefresh.nanoseconds,
            reportWhileDebugged: configuration.reportWhileDebugged)
    }

    /// One watch per monitored thread, handing its stalls to `writer`.
    static func makeWatches(
        threads: [MonitoredThread], settings: ThreadWatch.Settings, counters: MonitorCounters,
        controls: MonitorControls,
        writer: ReportWriter, errors: ErrorReporter, asyncChains: AsyncChainSource?
    ) -> [ThreadWatch] {
        threads.map { thread in
            ThreadWatch(
                thread: thread, settings: settings, counters: counters, controls: controls,
                environment: .init(reportProblem: { errors.report($0) }, asyncChains: asyncChains),
                emit: { writer.submit($0) })
        }
    }

    /// Each shared loop among `probes` (the concurrency pool) starts telling the monitor's parts
    /// what it does as a whole, once however many of its slots are watched.
    static func observeSharedLoops(of probes: [any LoopProbe], _ parts: SharedLoopObservers) {
        for probe in oneEachPerSharedLoop(probes, \.sharedLoop) { probe.sharedLoop?.observe(parts) }
    }

    /// Attaches each thread's probe to its tracker; each thread arms itself for sampling (a
    /// probe with a thread per span arms each worker it meets).
    static func armThreads(
        _ threads: [MonitoredThread], configuration: Configuration, signal: Int32, errors: ErrorReporter
    ) {
        let timeout = configuration.sampleTimeout.nanoseconds
        let maxFrames = configuration.maxFramesPerSample
        let report: @Sendable (String) -> Void = { errors.report(.threadArming($0)) }
        StackSampler.prepareHandlerUnwinder(
            for: configuration.unwinding, symbolicateInProcess: configuration.symbolicateInProcess)
        for thread in threads {
            if thread.probe.threadPerSpan {
                thread.probe.attach(to: thread.tracker) { thread.armWorker(signal: signal, report: report) }
                continue
            }
            thread.probe.attach(to: thread.tracker) {
                thread.arm(signal: signal, sampleTimeout: timeout, maxFrames: maxFrames, report: report)
            }
        }
    }
}
