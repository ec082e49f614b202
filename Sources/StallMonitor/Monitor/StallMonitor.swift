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

    /// The configuration the monitor runs with.
    public let configuration: Configuration
    /// The real-time signal used to sample the stuck thread.
    public let signal: Int32

    /// One per watched loop (a run loop; every event loop of a group).
    let threads: [MonitoredThread]
    private let watchdog: Watchdog
    private let writer: ReportWriter
    let errors: ErrorReporter
    let counters: MonitorCounters
    private let controls: MonitorControls
    private let session: SessionRecorder
    private let metrics: StallMetrics
    /// Takes, counts and writes blocking calls (``Configuration/blockingCalls``); nil without.
    let blockingCalls: BlockingCallReporter?
    /// Rewrites the session record every ``Configuration/sessionHeartbeatInterval`` (and marks it
    /// alive in place in between, often at first), and releases
    /// libdw's sessions and the stack-copy buffers once stalls have been quiet for
    /// ``Configuration/releaseCachesAfter``.
    private let timer: RepeatingTimer
    /// The gate of the timer's cache-release job (``CacheUse``).
    private let cacheGate: RepeatingTimer.Gate
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
    public static func start(
        _ configuration: Configuration, loop: Loop = .main
    ) throws(StallMonitorError) -> StallMonitor {
        try start(
            configuration, loops: [loop], pollInterval: loop == .mainActor ? .milliseconds(20) : .milliseconds(10))
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
    public static func start(
        _ configuration: Configuration, mainActorPollInterval: Duration
    ) throws(StallMonitorError) -> StallMonitor {
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
    /// the threshold is said to be starved. While no worker runs a task the watchdog sleeps until
    /// the runtime's global enqueue wakes it (a pass-through `swift_task_enqueueGlobal_hook`,
    /// in place while the pool is watched), with a look every 2 s for jobs that reach the pool
    /// another way. Hand the global executor to SwiftNIO (its takeover installs itself only where
    /// no hook is set) before starting such a monitor. The start checks, inside a task on a
    /// thread of the monitor's own (the pool runs nothing for it), that this runtime's state
    /// reads as expected (x86_64 Linux with glibc) and throws
    /// ``StallMonitorError/Code/unsupportedLoop`` otherwise.
    ///
    /// - Parameters:
    ///   - configuration: the threshold applies to each loop and to each job on the pool.
    ///   - loops: the loops to watch, each at most once (``Loop/main`` and ``Loop/current`` are
    ///     the same loop on the main thread: give one of them).
    ///   - pollInterval: how often the watchdog looks at the MainActor and at a busy pool (at
    ///     least 1 ms; the error of a pool stall's start and end is half of it). Default 10 ms.
    public static func start(
        _ configuration: Configuration, loops: [Loop], pollInterval: Duration = .milliseconds(10)
    )
        throws(StallMonitorError) -> StallMonitor
    {
        try start(configuration, loops: loops, polling: [], pollInterval: pollInterval)
    }

    /// Starts watching `loops` and loops that call nobody back (the event loops of a SwiftNIO
    /// group), each looked at every `pollInterval` from the watchdog (``ThreadPollingProbe``).
    /// For the integration targets.
    package static func start(
        _ configuration: Configuration, loops: [Loop], polling polled: [PolledLoop], pollInterval: Duration
    )
        throws(StallMonitorError) -> StallMonitor
    {
        try configuration.validate()
        guard !loops.isEmpty || !polled.isEmpty else { throw .invalidConfiguration("no loops to watch") }
        guard Set(loops).count == loops.count else { throw .invalidConfiguration("a loop is given twice") }
        guard pollInterval >= .milliseconds(1) else {
            throw .invalidConfiguration("the poll interval must be at least 1 ms")
        }
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
                if let note = layout.taskIDNote { configuration.logger.warning("StallMonitor: \(note)") }
                probes.append(
                    contentsOf: ConcurrencyPoolProbe(
                        layout: layout, threshold: UInt64(configuration.threshold.nanoseconds), interval: nanos,
                        slots: ConcurrencyPoolProbe.slotCount()
                    ).makeSlots())
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
        let signal =
            workers
            ? try StackSampler.installForDispatchWorkers(signal: configuration.signal)
            : try StackSampler.install(signal: configuration.signal)
        return StallMonitor(
            configuration: configuration, signal: signal, probes: probes, directoryProblem: directoryProblem,
            asyncChains: asyncChains)
    }

    /// Assembles a monitor of `probes` that samples with `signal` and starts its watchdog.
    private init(
        configuration: Configuration, signal: Int32, probes: [any LoopProbe], directoryProblem: StallMonitorError?,
        asyncChains: AsyncChainSource?
    ) {
        self.configuration = configuration
        self.signal = signal
        let threshold = configuration.threshold.nanoseconds
        let lead = UInt64(Double(threshold) * configuration.samplingLead)
        let wakeup = WakeupSignal()
        let threads = Self.makeThreads(probes: probes, configuration: configuration, lead: lead, wakeup: wakeup)
        let counters = MonitorCounters()
        let metrics = StallMetrics(options: configuration.metrics, startedAt: CStallMonitor_monotonic_ns())
        let errors = ErrorReporter(logger: configuration.logger, interval: configuration.logInterval)
        let controls = MonitorControls()
        if let directoryProblem { errors.report(directoryProblem) }
        let process = HostFacts.process(appVersion: configuration.appVersion)
        let quota = ReportQuota(
            folder: ReportFolder(configuration.reportDirectory), maxFiles: configuration.maxReportFiles,
            maxBytes: configuration.maxReportBytes, counters: counters, errors: errors)
        let store = ReportFileStore(
            directory: configuration.reportDirectory, quota: quota, unfinished: MonitorProcess.shared.unfinishedFiles)
        let session = SessionRecorder(
            store: store, process: process, thresholdMs: Double(threshold) / 1e6, counters: counters, errors: errors)
        let writer = Self.makeWriter(
            configuration: configuration, process: process, store: store, errors: errors,
            counters: counters, session: session, metrics: metrics)
        let watchSettings = Self.watchSettings(
            configuration: configuration, threshold: threshold, lead: lead, signal: signal)
        let watches = Self.makeWatches(
            threads: threads, settings: watchSettings, counters: counters, controls: controls,
            writer: writer, errors: errors, asyncChains: asyncChains)
        self.threads = threads
        self.counters = counters
        self.errors = errors
        self.controls = controls
        self.writer = writer
        self.session = session
        // Waking a threshold (at least 250 ms) late means the whole process was stopped.
        self.watchdog = Watchdog(
            watches: watches, wakeup: wakeup, counters: counters, metrics: metrics,
            stoppedAfter: max(threshold, 250_000_000),
            silenceCheck: .init(after: UInt64(configuration.loopSilenceWarning.nanoseconds)) { silent in
                for thread in silent {
                    errors.report(.loopNotRunning(Self.silenceMessage(thread, after: configuration.loopSilenceWarning)))
                }
            })
        Self.observeSharedLoops(
            of: probes,
            .init(
                settings: watchSettings, metrics: metrics, counters: counters,
                errors: errors, controls: controls, writer: writer))
        Self.armThreads(threads, configuration: configuration, signal: signal, errors: errors)
        MonitorProcess.shared.symbolicator.retain()
        MonitorProcess.shared.unwinder.retain()
        watchdog.start()
        let sweeper = StaleReportSweeper(store: store, hostName: process.hostName, errors: errors)
        writer.perform {
            writer.sayNewSyscallDenials()
            session.heartbeat()
            sweeper.sweep()
            writer.enforceQuota()
        }
        self.metrics = metrics
        let blockingCalls = configuration.blockingCalls.flatMap { options in
            BlockingCallReporter.start(
                options: options, store: store, process: process, tags: configuration.tags, metrics: metrics,
                errors: errors, threads: threads)
        }
        self.blockingCalls = blockingCalls
        let quiet = UInt64(configuration.releaseCachesAfter.nanoseconds)
        // Open: the first run closes it unless the caches were used (by another monitor, say).
        let cacheGate = RepeatingTimer.Gate(open: true)
        MonitorProcess.shared.cacheUse.add(cacheGate)
        self.cacheGate = cacheGate
        // One timer thread for the three jobs. The record is rewritten every heartbeat interval;
        // in between its alive mark ramps up to that interval, so a session that dies without
        // stop() (SIGKILL, a crash) is dated within max(1 s, 10 %) of its life.
        timer = writer.repeating(
            [
                .queued(.every(.nanoseconds(quiet / 2)), gate: cacheGate) {
                    CacheRelease.releaseJob(quiet: quiet, gate: cacheGate)
                },
                .queued(.every(configuration.sessionHeartbeatInterval)) {
                    writer.sayNewSyscallDenials()
                    session.heartbeat()
                    Self.emitMetrics(metrics, threads: threads, counters: counters, errors: errors)
                },
                .onTimerThread(.rampingUp(to: configuration.sessionHeartbeatInterval)) { session.markAlive() },
            ]
                + (blockingCalls.map { reporter in
                    [.queued(.every(.seconds(1)), gate: reporter.gate) { reporter.poll() }]
                }
                    ?? []))
        configuration.onStart?(self)
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
        let metrics = self.metrics
        let threads = self.threads
        let counters = self.counters
        let errors = self.errors
        return Shutdown(
            watchdog: watchdog, timer: timer, cacheGate: cacheGate, session: session, writer: writer,
            blockingCalls: blockingCalls,
            emitMetrics: { Self.emitMetrics(metrics, threads: threads, counters: counters, errors: errors) })
    }

    /// The blocking part of stopping: joins the watchdog, writes what is queued, then releases
    /// the process-wide parts (signal disposition, libdw sessions) when no other monitor runs.
    private struct Shutdown: Sendable {
        let watchdog: Watchdog
        let timer: RepeatingTimer
        let cacheGate: RepeatingTimer.Gate
        let session: SessionRecorder
        let writer: ReportWriter
        let blockingCalls: BlockingCallReporter?
        /// The last emission of the loops' times and dropped counts.
        let emitMetrics: @Sendable () -> Void

        func finish() {
            watchdog.stop()
            timer.cancel()
            MonitorProcess.shared.cacheUse.remove(cacheGate)
            let session = self.session
            let emitMetrics = self.emitMetrics
            let blockingCalls = self.blockingCalls
            writer.perform {
                blockingCalls?.finish()
                session.heartbeat(stopping: true)
                emitMetrics()
            }
            writer.close(waiting: writer.flush(timeout: .seconds(5)))
            StackSampler.uninstall()
            MonitorProcess.shared.symbolicator.release()
            MonitorProcess.shared.unwinder.release()
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
        guard
            let tracker = threads.first(where: {
                $0.probe.runsLoopWork(on: tid, armedTID: $0.armedTID.load(ordering: .acquiring))
            })?.tracker
        else {
            // A worker of a shared loop (the pool) no slot watches yet: its next span is marked
            // when one does.
            if let loop = threads.lazy.compactMap({ $0.probe.sharedLoop }).first {
                return try loop.expectingLongWork(on: tid, body)
            }
            return try body()
        }
        tracker.markExpectedLongWork()
        defer { tracker.markExpectedLongWork() }
        return try body()
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
