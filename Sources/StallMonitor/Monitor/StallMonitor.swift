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
        /// The MainActor of a program with `async main` or `dispatchMain()`: the Dispatch main
        /// queue, drained by whichever Dispatch worker thread picks it up. Each stall is reported
        /// with the worker that ran it (loop kind `mainActor`). Looked at every 20 ms
        /// (``start(_:mainActorPollInterval:)`` sets another interval). A program whose main
        /// thread runs `RunLoop.main` drains the main queue there: watch `.main` instead, whose
        /// observers see MainActor work too.
        case mainActor
        /// The Swift concurrency pool: the global executor's worker threads, where `Task {}`,
        /// `Task.detached`, task groups, `async let`, actors on the default executor and the async
        /// route handlers of Hummingbird 2 and Vapor 4 run. Each job that holds a worker past the
        /// threshold is reported with the worker (loop kind `concurrencyPool`); see
        /// ``start(_:loops:pollInterval:)``.
        case concurrencyPool
    }

    /// The loop kind reports name for the concurrency pool (``Loop/concurrencyPool``).
    public static let concurrencyPoolKind = ConcurrencyPoolProbe.loopKind

    /// The loop kind reports name for the MainActor (``Loop/mainActor``).
    public static let mainActorKind = MainQueueProbe.loopKind

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
        /// Times the Swift concurrency pool started no new job for longer than the threshold
        /// (``StallMonitorError/Code/poolStarved``).
        public var poolStarvations: Int
        /// Errors by kind (e.g. `reportWrite`).
        public var errors: [String: Int]
        /// The most recent error.
        public var lastError: StallMonitorError?
    }

    /// The configuration the monitor runs with.
    public let configuration: Configuration
    /// The real-time signal used to sample the stuck thread.
    public let signal: Int32

    /// One per watched loop (a run loop; every event loop of a group).
    private let threads: [MonitoredThread]
    private let watchdog: Watchdog
    private let writer: ReportWriter
    private let errors: ErrorReporter
    private let counters: MonitorCounters
    private let controls: MonitorControls
    private let session: SessionRecorder
    private let metrics: StallMetrics
    /// Rewrites the session record every ``Configuration/sessionHeartbeatInterval``, and releases
    /// libdw's sessions and the stack-copy buffers once stalls have been quiet for
    /// ``Configuration/releaseCachesAfter``.
    private let timer: RepeatingTimer
    private let stopped = Atomic<Bool>(false)
    /// The process that started the monitor: a forked child has no watchdog or writer threads.
    private let ownerPID = getpid()

    /// Starts watching `loop` (the main run loop by default). Call from the loop's own thread when
    /// possible; otherwise the thread arms itself the next time its loop runs.
    ///
    /// Throws ``StallMonitorError/loopNotRunning(_:)`` for `.main` when the main thread is known
    /// never to run its run loop: a program with `async main` or `dispatchMain()`, whose main
    /// thread is parked in `sigsuspend` (or has exited) while a worker thread calls this.
    ///
    /// For ``Loop/mainActor`` (see ``start(_:mainActorPollInterval:)``) it throws
    /// ``StallMonitorError/Code/unsupportedLoop`` when this toolchain's main queue cannot be read;
    /// for ``Loop/concurrencyPool`` (see ``start(_:loops:pollInterval:)``) when this runtime's
    /// per-thread state cannot.
    public static func start(_ configuration: Configuration, loop: Loop = .main) throws(StallMonitorError) -> StallMonitor {
        try start(configuration, loops: [loop], pollInterval: loop == .mainActor ? .milliseconds(20) : .milliseconds(10))
    }

    /// Starts watching the MainActor of a program with `async main` or `dispatchMain()` (the
    /// Dispatch main queue, drained by Dispatch worker threads), as ``start(_:loop:)`` with
    /// ``Loop/mainActor`` does, looking at it every `mainActorPollInterval`.
    ///
    /// No runtime hook is installed: the watchdog reads which thread drains the main queue from
    /// libdispatch's queue state (one memory load per look; none of the app's jobs is wrapped or
    /// delayed), and while it is busy queues a no-op block on it whose run ends the span. The
    /// interval bounds how precisely a stall's start is dated (half an interval) and is the
    /// watchdog's wake-up rate while the queue is idle.
    ///
    /// Call it from MainActor code or from a thread other than the main thread. It checks that
    /// this libdispatch's queue state reads as expected (known for Swift 6.3 on 64-bit Linux) and
    /// throws ``StallMonitorError/Code/unsupportedLoop`` otherwise, or
    /// ``StallMonitorError/Code/loopNotRunning`` when the main queue does not run a block within
    /// 2 s: it never starts watching nothing.
    public static func start(_ configuration: Configuration, mainActorPollInterval: Duration) throws(StallMonitorError) -> StallMonitor {
        try start(configuration, loops: [.mainActor], pollInterval: mainActorPollInterval)
    }

    /// Starts one monitor for several loops: e.g. `[.mainActor, .concurrencyPool]` for an
    /// `async main` program, `[.main, .concurrencyPool]` for an app that runs `RunLoop.main` and
    /// also uses Swift concurrency. Each stall is reported with its loop kind and thread.
    ///
    /// ``Loop/concurrencyPool`` watches the workers of the Swift concurrency global executor
    /// (where `Task {}`, `Task.detached`, task groups, `async let`, actors and the async handlers
    /// of Hummingbird 2 and Vapor 4 run). No executor is replaced and no job is wrapped: every
    /// `pollInterval` the watchdog reads which task each worker runs from the runtime's own
    /// per-thread state, so a job that holds a worker past the threshold (a CPU loop, `usleep`,
    /// a blocking `read`, a lock, `DispatchSemaphore.wait()`) is reported with the worker's
    /// stack (loop kind `concurrencyPool`), and a pool that starts no new job for longer than
    /// the threshold is said to be starved. The start checks, inside a task on the pool, that
    /// this runtime's state reads as expected (x86_64 Linux with glibc) and throws
    /// ``StallMonitorError/Code/unsupportedLoop`` otherwise, or
    /// ``StallMonitorError/Code/loopNotRunning`` when the pool runs no task within 2 s.
    ///
    /// - Parameters:
    ///   - configuration: the threshold applies to each loop and to each job on the pool.
    ///   - loops: the loops to watch, each at most once (``Loop/main`` and ``Loop/current`` are
    ///     the same loop on the main thread: give one of them).
    ///   - pollInterval: how often the watchdog looks at the MainActor and the pool (at least
    ///     1 ms; the error of a pool stall's start and end is half of it). Default 10 ms.
    public static func start(_ configuration: Configuration, loops: [Loop], pollInterval: Duration = .milliseconds(10))
        throws(StallMonitorError) -> StallMonitor {
        try start(configuration, loops: loops, polling: [], pollInterval: pollInterval)
    }

    /// Starts watching `loops` and loops that call nobody back (the event loops of a SwiftNIO
    /// group), each looked at every `pollInterval` from the watchdog (``ThreadPollingProbe``).
    /// For the integration targets.
    package static func start(_ configuration: Configuration, loops: [Loop], polling polled: [PolledLoop], pollInterval: Duration)
        throws(StallMonitorError) -> StallMonitor {
        try configuration.validate()
        guard !loops.isEmpty || !polled.isEmpty else { throw .invalidConfiguration("no loops to watch") }
        guard Set(loops).count == loops.count else { throw .invalidConfiguration("a loop is given twice") }
        guard pollInterval >= .milliseconds(1) else { throw .invalidConfiguration("the poll interval must be at least 1 ms") }
        let nanos = UInt64(pollInterval.nanoseconds)
        // The event loops first: `watchedLoops` lists them in the group's order, then the others.
        var probes: [any LoopProbe] = polled.map { ThreadPollingProbe($0, interval: nanos) }
        var poolLayout: Result<PoolLayout, StallMonitorError>?
        for loop in loops {
            switch loop {
            case .main, .current:
                if loop == .main, let why = MainThreadState.whyNoMainRunLoop() { throw .loopNotRunning(why) }
                probes.append(RunLoopProbe(loop))
            case .mainActor:
                let queue: MainQueueState
                switch MainQueueState.locate() {
                case .success(let found): queue = found
                case .failure(let error): throw error
                }
                if let error = queue.verify() { throw error }
                probes.append(MainQueueProbe(queue, interval: nanos))
            case .concurrencyPool:
                let layout: PoolLayout
                switch PoolLayout.learn() {
                case .success(let found): layout = found
                case .failure(let error): throw error
                }
                poolLayout = .success(layout)
                probes.append(contentsOf: ConcurrencyPoolProbe(layout: layout, threshold: UInt64(configuration.threshold.nanoseconds), interval: nanos,
                                                                slots: ConcurrencyPoolProbe.slotCount()).makeSlots())
            }
        }
        if poolLayout == nil, loops.contains(.mainActor) {
            // The MainActor runs tasks too: their async callers need the runtime's task word.
            poolLayout = PoolLayout.learn(timeout: .seconds(1))
        }
        let asyncChains = poolLayout.map(AsyncChainSource.make)
        var directoryProblem: StallMonitorError?
        do {
            try ReportFileStore.prepareUsable(configuration.reportDirectory)
        } catch {
            guard !configuration.requireUsableReportDirectory else { throw error }
            directoryProblem = error  // said once the monitor runs; reports are written once it can
        }
        let workers = loops.contains(.mainActor) || loops.contains(.concurrencyPool)
        let signal = workers ? try StackSampler.installForDispatchWorkers(signal: configuration.signal)
            : try StackSampler.install(signal: configuration.signal)
        return StallMonitor(configuration: configuration, signal: signal, probes: probes, directoryProblem: directoryProblem,
                            asyncChains: asyncChains)
    }

    private init(configuration: Configuration, signal: Int32, probes: [any LoopProbe], directoryProblem: StallMonitorError?,
                 asyncChains: AsyncChainSource?) {
        self.configuration = configuration
        self.signal = signal
        let threshold = configuration.threshold.nanoseconds
        let lead = UInt64(Double(threshold) * configuration.samplingLead)
        let wakeup = WakeupSignal()
        let threads = probes.map { (probe: any LoopProbe) -> MonitoredThread in
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
                voluntarySwitches: switches, idleYields: idleYields)
            return MonitoredThread(tracker: tracker, probe: probe, workers: probe.armedWorkers ?? Locked([:]))
        }
        let counters = MonitorCounters()
        let metrics = StallMetrics(options: configuration.metrics, startedAt: CStallMonitor_monotonic_ns())
        let errors = ErrorReporter(logger: configuration.logger, interval: configuration.logInterval)
        let controls = MonitorControls()
        if let directoryProblem { errors.report(directoryProblem) }
        let process = HostFacts.process(appVersion: configuration.appVersion)
        let quota = ReportQuota(folder: ReportFolder(configuration.reportDirectory), maxFiles: configuration.maxReportFiles,
                                maxBytes: configuration.maxReportBytes, counters: counters, errors: errors)
        let store = ReportFileStore(directory: configuration.reportDirectory, quota: quota)
        let session = SessionRecorder(
            store: store, process: process, thresholdMs: Double(threshold) / 1e6, errors: errors,
            sample: { Self.sessionCounts(threads: threads, counters: counters, errors: errors) })
        let writer = ReportWriter(
            builder: ReportBuilder(symbolicator: .shared, process: process, tags: configuration.tags,
                                   symbolicateInProcess: configuration.symbolicateInProcess),
            store: store, errors: errors, counters: counters,
            limiter: FingerprintRateLimiter(limit: configuration.maxReportsPerFingerprint, window: configuration.rateLimitWindow.nanoseconds),
            session: session, metrics: metrics, onReport: configuration.onReport)
        let watches = threads.map { thread in ThreadWatch(
            thread: thread,
            settings: .init(
                threshold: threshold, lead: lead, interval: configuration.samplingInterval.nanoseconds,
                sampleTimeout: configuration.sampleTimeout.nanoseconds, maxSamples: configuration.maxSamplesPerStall,
                maxFrames: configuration.maxFramesPerSample, reentryGrace: configuration.reentryGrace.nanoseconds,
                unwinding: configuration.unwinding, symbolicateInProcess: configuration.symbolicateInProcess,
                stackCopyBytes: configuration.stackCopyBytes, signal: signal,
                inProgressRefresh: configuration.inProgressRefresh.nanoseconds,
                reportWhileDebugged: configuration.reportWhileDebugged),
            counters: counters, controls: controls,
            emit: { writer.submit($0) }) }
        for watch in watches {
            watch.reportProblem = { errors.report($0) }
            watch.asyncChains = asyncChains
        }
        self.threads = threads
        self.counters = counters
        self.errors = errors
        self.controls = controls
        self.writer = writer
        self.session = session
        // Waking a threshold (at least 250 ms) late means the whole process was stopped.
        self.watchdog = Watchdog(
            watches: watches, wakeup: wakeup, counters: counters, metrics: metrics, stoppedAfter: max(threshold, 250_000_000),
            silenceCheck: .init(after: UInt64(configuration.loopSilenceWarning.nanoseconds)) { silent in
                for thread in silent { errors.report(.loopNotRunning(Self.silenceMessage(thread, after: configuration.loopSilenceWarning))) }
            })
        if let pool = (probes.first { $0 is PoolSlotProbe } as? PoolSlotProbe)?.pool {
            pool.observers.withLock {
                let settings = PoolStarvationReport.Settings(
                    threshold: UInt64(threshold), interval: configuration.samplingInterval.nanoseconds,
                    maxSamples: configuration.maxSamplesPerStall, signal: signal, sampleTimeout: configuration.sampleTimeout.nanoseconds,
                    stackCopyBytes: configuration.stackCopyBytes, maxFrames: configuration.maxFramesPerSample,
                    unwinding: configuration.unwinding, symbolicateInProcess: configuration.symbolicateInProcess)
                $0 = .init(delay: { metrics.recordPoolDelay(nanoseconds: $0) }, starved: { waited, workers in
                    counters.poolStarvations.add(1, ordering: .relaxed)
                    errors.report(.poolStarved(Self.starvationMessage(waited: waited, workers: workers)))
                }, report: PoolStarvationReport(settings: settings, emit: { [weak writer] recording in
                    // Weak: the writer's session record reads the monitored threads, which hold
                    // the pool, which holds this closure.
                    // A paused monitor reports nothing (as for a loop's stalls).
                    guard !controls.isPaused, let writer else { return }
                    counters.stallsDetected.add(1, ordering: .relaxed)
                    writer.submit(.ended(recording))
                }))
            }
        }
        let timeout = configuration.sampleTimeout.nanoseconds
        let maxFrames = configuration.maxFramesPerSample
        let report: @Sendable (String) -> Void = { errors.report(.threadArming($0)) }
        StackSampler.prepareHandlerUnwinder(for: configuration.unwinding, symbolicateInProcess: configuration.symbolicateInProcess)
        for thread in threads {
            if thread.probe.threadPerSpan {
                thread.probe.attach(to: thread.tracker) { thread.armWorker(signal: signal, report: report) }
                continue
            }
            thread.probe.attach(to: thread.tracker) {
                thread.arm(signal: signal, sampleTimeout: timeout, maxFrames: maxFrames, report: report)
            }
        }
        Symbolicator.shared.retain()
        SnapshotUnwinder.shared.retain()
        watchdog.start()
        let sweeper = StaleReportSweeper(store: store, hostName: process.hostName, errors: errors)
        writer.perform {
            session.heartbeat()
            sweeper.sweep()
            writer.enforceQuota()
        }
        self.metrics = metrics
        let quiet = UInt64(configuration.releaseCachesAfter.nanoseconds)
        // One timer thread for both jobs.
        // The heartbeat ramps up to its interval: a session that dies without stop() (SIGKILL, a
        // crash) is then dated within max(1 s, 10 %) of its life.
        timer = writer.repeating(schedules: [.every(.nanoseconds(quiet / 2)), .rampingUp(to: configuration.sessionHeartbeatInterval)], jobs: [
            { CacheRelease.releaseIfQuiet(for: quiet) },
            {
                session.heartbeat()
                Self.emitMetrics(metrics, threads: threads, counters: counters, errors: errors)
            },
        ])
        configuration.onStart?(self)
    }

    /// What the warning says of a starved pool.
    private static func starvationMessage(waited: UInt64, workers: [ConcurrencyPoolProbe.HeldWorker]) -> String {
        let held = workers.map { worker in
            let job = worker.heldFor.map { "a task held it \($0 / 1_000_000) ms" } ?? "no task (other Dispatch work or between jobs)"
            return "thread \(worker.tid) \(worker.name): \(job)"
        }
        return "no new job started for \(waited / 1_000_000) ms: every worker is held (\(held.joined(separator: "; "))); "
            + "one report gives every worker's stack"
    }

    /// What the warning says of a loop that has not run since the monitor started.
    private static func silenceMessage(_ thread: MonitoredThread, after: Duration) -> String {
        let seconds = Double(after.nanoseconds) / 1e9
        let waited = seconds.rounded() == seconds ? "\(Int(seconds)) s" : "\(seconds) s"
        switch thread.loopKind {
        case "runLoop":
            return "the watched run loop has not run in the \(waited) since the monitor started: nothing is watched. "
                + "A program with `async main` or `dispatchMain()` never runs RunLoop.main (see the README's "
                + "\"Which loop does my program run?\"); `loop: .current` watches the calling thread's run loop."
        default:
            return "the watched \(thread.loopKind) has not run a task in the \(waited) since the monitor started: it is not watched."
        }
    }

    /// Emits the loops' times and brings the dropped-report counters up to date (writer queue:
    /// each heartbeat, and at stop).
    private static func emitMetrics(_ metrics: StallMetrics, threads: [MonitoredThread], counters: MonitorCounters,
                                    errors: ErrorReporter) {
        metrics.emitLoopTime(threads, now: CStallMonitor_monotonic_ns())
        metrics.syncDropped(counters, errors: errors.counts)
    }

    private static func sessionCounts(threads: [MonitoredThread], counters: MonitorCounters, errors: ErrorReporter)
        -> (spans: Int, stalls: Int, written: Int, dropped: [String: Int]) {
        var dropped = errors.counts.filter { $0.key == "reportWrite" || $0.key == "reportEncoding" }
        let rateLimited = counters.reportsRateLimited.load(ordering: .relaxed)
        let quota = counters.reportsDeletedForQuota.load(ordering: .relaxed)
        if rateLimited > 0 { dropped["rateLimitedToSummary"] = rateLimited }
        if quota > 0 { dropped["deletedForQuota"] = quota }
        let overwritten = counters.longSpansOverwritten.load(ordering: .relaxed)
        if overwritten > 0 { dropped["watchdogStarved"] = overwritten }
        let spans = threads.reduce(0) { $0 + Int($1.tracker.currentSpan().sequence) }
        return (spans, counters.stallsDetected.load(ordering: .relaxed),
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
        for thread in threads { thread.probe.detach() }
        // In a forked child only the calling thread exists: there is no watchdog to join and no
        // writer to flush. Leave the inherited handler in place; nothing sends it here.
        guard getpid() == ownerPID else { return nil }
        let metrics = self.metrics, threads = self.threads, counters = self.counters, errors = self.errors
        return Shutdown(watchdog: watchdog, timer: timer, session: session, writer: writer,
                        emitMetrics: { Self.emitMetrics(metrics, threads: threads, counters: counters, errors: errors) })
    }

    /// The blocking part of stopping: joins the watchdog, writes what is queued, then releases
    /// the process-wide parts (signal disposition, libdw sessions) when no other monitor runs.
    private struct Shutdown: Sendable {
        let watchdog: Watchdog
        let timer: RepeatingTimer
        let session: SessionRecorder
        let writer: ReportWriter
        /// The last emission of the loops' times and dropped counts.
        let emitMetrics: @Sendable () -> Void

        func finish() {
            watchdog.stop()
            timer.cancel()
            let session = self.session
            let emitMetrics = self.emitMetrics
            writer.perform {
                session.heartbeat(stopping: true)
                emitMetrics()
            }
            writer.close(waiting: writer.flush(timeout: .seconds(5)))
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
    /// monitored thread without it being reported as a stall. Call it on the monitored thread
    /// (on another thread it just runs `body`). In a task on the concurrency pool, it covers the
    /// job that calls it.
    public func expectLongWork<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        let tid = CStallMonitor_gettid()
        guard let tracker = threads.first(where: {
                $0.probe.threadPerSpan ? $0.probe.runsLoopWork(on: tid) : $0.armedTID.load(ordering: .acquiring) == tid
            })?.tracker
            ?? (threads.count == 1 && threads[0].probe is RunLoopProbe ? threads[0].tracker : nil)
        else {
            // A pool worker the watchdog has not met yet: its next span is marked when it does.
            if let pool = (threads.lazy.compactMap { $0.probe as? PoolSlotProbe }.first)?.pool {
                return try pool.expectingLongWork(on: tid, body)
            }
            return try body()
        }
        tracker.markExpectedLongWork()
        defer { tracker.markExpectedLongWork() }
        return try body()
    }

    /// A loop the monitor watches, as it is now.
    public struct WatchedLoop: Sendable, Equatable {
        /// The loop kind reports name: `runLoop`, `nioEventLoop`, `mainActor`.
        public var kind: String
        /// Whether the loop has been seen running since the monitor started. A loop that has not
        /// within ``Configuration/loopSilenceWarning`` is said through the logger: nothing of it is
        /// watched (e.g. `RunLoop.main` in a program whose main thread never runs it).
        public var hasRun: Bool
        /// The kernel id of the loop's thread, once it has run (for the MainActor: the worker
        /// thread that ran its latest span, or the first one seen).
        public var threadID: Int32?
        /// The name of the loop's thread (an event loop's `NIO-ELT-0-#1`), once it has run.
        public var threadName: String?
    }

    /// The loops this monitor watches (one run loop, or every event loop of a group) and whether
    /// each has run yet.
    public var watchedLoops: [WatchedLoop] {
        // The concurrency pool's slots are one loop: listed once, with the worker of its latest span.
        var poolListed = false
        let listed = threads.filter { thread in
            guard thread.probe is PoolSlotProbe else { return true }
            defer { poolListed = true }
            return !poolListed
        }
        return listed.map { thread in
            // A loop whose thread changes from span to span: the thread of its latest span.
            let spanThread = thread.probe.threadPerSpan ? thread.tracker.spanThread.load(ordering: .relaxed) : 0
            let tid = spanThread != 0 ? spanThread : thread.armedTID.load(ordering: .acquiring)
            return WatchedLoop(kind: thread.loopKind, hasRun: thread.hasRun, threadID: tid == 0 ? nil : tid,
                               threadName: tid == 0 ? nil : ThreadProcFiles.threadName(tid: tid))
        }
    }

    /// The host app's current scene (screen, request, test name), copied into reports of stalls
    /// that begin while it is set. Callable from any thread.
    public var scene: String? {
        get { controls.scene }
        set { controls.scene = newValue }
    }

    /// When each watched loop that is in an awake span now began it (``monotonicNanoseconds()``),
    /// for the test integrations, which wait after a test's body for spans that began during it.
    package var openSpanStarts: [UInt64] {
        threads.compactMap { thread in
            let span = thread.tracker.currentSpan()
            return span.phase == .open ? span.start : nil
        }
    }

    /// The monotonic clock span starts are dated with, in nanoseconds.
    package static func monotonicNanoseconds() -> UInt64 { CStallMonitor_monotonic_ns() }

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
            spans: threads.reduce(0) { $0 + Int($1.tracker.currentSpan().sequence) },
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
            poolStarvations: counters.poolStarvations.load(ordering: .relaxed),
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
