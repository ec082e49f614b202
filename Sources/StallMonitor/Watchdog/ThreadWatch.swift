import CStallMonitor
import Foundation
import StallReportModel
import Synchronization

/// The watchdog's view of one monitored thread: waits for a span to reach the sampling lead,
/// samples until it ends, and hands stalls longer than the threshold to the writer.
/// Used only on the watchdog thread.
final class ThreadWatch {
    struct Settings {
        var threshold: UInt64
        var lead: UInt64
        var interval: UInt64
        var sampleTimeout: UInt64
        var maxSamples: Int
        var maxFrames: Int
        var reentryGrace: UInt64
        var unwinding: StallMonitor.Unwinding
        /// Whether reports are named in process (libdw is loaded for that anyway).
        var symbolicateInProcess: Bool
        var stackCopyBytes: Int
        var signal: Int32
        var inProgressRefresh: UInt64
        var reportWhileDebugged: Bool
    }

    let thread: MonitoredThread
    let settings: Settings
    let counters: MonitorCounters
    let controls: MonitorControls
    /// Hands stall events to the writer.
    let emit: (StallEvent) -> Void
    /// The /proc files of the thread sampled now.
    private(set) var procFiles: ThreadProcFiles?
    /// Facts about the thread sampled now, copied into its reports (nil until it is met).
    var identity: MonitoredThread.Identity?
    /// Samples the thread of the tracked span.
    let sampler: ThreadSampler
    /// Waiting, recording the tracked span, or done with a thread that exited.
    private(set) var phase = WatchPhase.waiting
    /// The stall being recorded (the tracked span), nil while none is: ``phase``'s recording, read
    /// and written in place (a copy taken out first, as ``sample(now:)`` does, is the only one
    /// when its samples grow).
    var recording: StallRecording? {
        get { phase.recording }
        set { phase.recording = newValue }
    }
    /// When the thread of the tracked span was last seen alive (monotonic ns).
    private var lastSeenAlive: UInt64 = 0
    /// When the next sample is due (monotonic ns).
    var nextSampleAt: UInt64 = 0
    /// How far the watch has dealt with the thread's spans.
    var progress = SpanProgress()
    /// Process-stopped time noticed before the watchdog began tracking span `sequence`.
    var stoppedBeforeTracking: (sequence: UInt64, nanos: UInt64) = (0, 0)
    /// What the watch reads and tells beyond its thread, fixed at init.
    let environment: Environment
    /// Time the machine has spent suspended since boot (``SuspendClock``).
    var machineSuspendedNanos: () -> UInt64 { environment.machineSuspendedNanos }
    /// The monitored thread's voluntary context switches (nil: read from `/proc`).
    var threadVoluntarySwitches: (() -> UInt64?)? { environment.threadVoluntarySwitches }
    /// CPU time of a thread in nanoseconds, -1 when it cannot be read (the sampler's clock).
    func threadCPUNanos(_ tid: pid_t) -> Int64 { sampler.threadCPUNanos(tid) }
    /// Says a problem through the monitor's logger and statistics.
    var reportProblem: (StallMonitorError) -> Void { environment.reportProblem }
    /// Reads the async callers of samples that ran in a task (shared by the watchdog's watches;
    /// nil: not read, as for loops that run no tasks).
    var asyncChains: AsyncChainSource? { environment.asyncChains }
    /// When the watchdog last went to sleep with a span open, and the thread's CPU time then.
    var cpuBeforeSleep: (at: UInt64, cpu: Int64)?
    /// The thread's spans already added to the counters' ``MonitorCounters/spansBegun``.
    private var spansCounted: UInt64 = 0

    /// A watch of `thread` that counts in `counters`, obeys `controls`, reads and tells through
    /// `environment` and hands stalls to `emit`.
    init(
        thread: MonitoredThread, settings: Settings, counters: MonitorCounters, controls: MonitorControls,
        environment: Environment = Environment(), emit: @escaping (StallEvent) -> Void
    ) {
        self.thread = thread
        self.settings = settings
        self.counters = counters
        self.controls = controls
        self.environment = environment
        self.emit = emit
        self.sampler = ThreadSampler(
            settings: .init(
                signal: settings.signal, sampleTimeout: settings.sampleTimeout, maxFrames: settings.maxFrames,
                stackCopyBytes: settings.stackCopyBytes, unwinding: settings.unwinding),
            counters: counters, knownBounds: { [thread] in thread.stackBounds(of: $0) })
        if let cpu = environment.threadCPUNanos { sampler.threadCPUNanos = cpu }
        if let installed = environment.samplingHandlerInstalled { sampler.samplingHandlerInstalled = installed }
    }

    /// Reads the thread's identity and opens its /proc files the first time it is seen armed;
    /// false while it has not armed itself.
    private func meetArmedThread() -> Bool {
        if identity != nil { return true }
        var tid = thread.armedTID.load(ordering: .acquiring)
        // A pool slot is never armed itself: it meets its first worker with its first span.
        if tid == 0, thread.probe.threadPerSpan { tid = thread.tracker.spanThread.load(ordering: .relaxed) }
        guard tid != 0 else { return false }
        identity = MonitoredThread.Identity(
            tid: tid, name: ThreadProcFiles.threadName(tid: tid), isMainThread: tid == getpid(),
            loopKind: thread.loopKind.rawValue,
            armingProblems: thread.armingProblems)
        procFiles = ThreadProcFiles(tid: tid)
        return true
    }

    /// Makes `tid` (a span's thread, ``SpanTracker/spanThread``; 0: the armed thread) the thread
    /// the watch samples and reports: a loop whose thread changes from span to span (the Dispatch
    /// main queue) is met again, identity and /proc files, whenever a span runs on another thread.
    func meetSpanThread(_ tid: Int32) {
        guard tid != 0, identity?.tid != tid, recording == nil else { return }
        identity = MonitoredThread.Identity(
            tid: tid, name: ThreadProcFiles.threadName(tid: tid), isMainThread: tid == getpid(),
            loopKind: thread.loopKind.rawValue,
            armingProblems: thread.armingProblems(of: tid))
        procFiles = ThreadProcFiles(tid: tid)
        sampler.forgetThread(tid)  // its stack is looked up again: the id may be a new thread's
    }

    /// Adds the spans the thread began since the last count to ``MonitorCounters/spansBegun``
    /// (after each look, and at stop): the counts flow from the tracker to the counters, which
    /// the session record reads.
    func countBegunSpans() {
        let begun = thread.tracker.spansBegun
        guard begun > spansCounted else { return }
        counters.spansBegun.add(Int(begun - spansCounted), ordering: .relaxed)
        spansCounted = begun
    }

    /// Whether a span is open now (used to avoid parking while one is).
    var hasOpenSpan: Bool {
        guard !phase.isThreadGone, thread.armedTID.load(ordering: .acquiring) != 0 || identity != nil else {
            return false
        }
        let span = thread.tracker.currentSpan()
        return span.phase == .open && progress.isPending(span.sequence)
    }

    /// Does what is due at `now`; returns when it next needs to run, nil when nothing is pending.
    /// A span that ends here (its recording finished, or its thread found gone) lets the watch
    /// look at once at what follows it.
    func step(now: UInt64) -> UInt64? {
        while true {
            guard !phase.isThreadGone, meetArmedThread() else { return nil }
            if recording != nil {
                if finishIfEnded(now: now) || finishIfThreadExited(now: now) { continue }
                if now >= nextSampleAt { sampleOrSkip(now: now) }
                return nextDeadlineWhileTracking(now: now)
            }
            reportMissedStalls(now: now)
            let span = thread.tracker.currentSpan()
            guard span.phase != .closed, progress.isPending(span.sequence) else { return nil }
            switch UntrackedSpanAction.at(
                now, start: span.start, suspended: span.phase == .suspended, suspendedAt: span.suspendedAt,
                lead: settings.lead, reentryGrace: settings.reentryGrace, threadSlept: threadSleptSinceSpanStart)
            {
            case .none: return nil
            case .lookAgain(let at): return at
            case .finishShort:
                progress.finishedUntracked(span.sequence, published: thread.tracker.endedSpans.publishedCount)
                return nil
            case .track: break
            }
            meetSpanThread(thread.tracker.spanThread.load(ordering: .relaxed))
            if procFiles?.threadExited() == true {
                // It exited inside the span, at a time nobody saw: not a stall anyone can measure.
                threadExitedUntracked(sequence: span.sequence)
                continue
            }
            beginTracking(sequence: span.sequence, start: span.start, now: now)
            lastSeenAlive = now
            sampleOrSkip(now: now)
            return nextDeadlineWhileTracking(now: now)
        }
    }

    /// Ends the tracked span when its thread has exited (`pthread_exit`): its observers will never
    /// end it. It ends where the thread was last seen alive (within a sampling interval of its
    /// exit) and is reported if that is past the threshold (without CPU time: the thread's clock
    /// is gone), discarded otherwise. A probe with one thread stops watching it.
    private func finishIfThreadExited(now: UInt64) -> Bool {
        guard let procFiles, let recording else { return false }
        guard procFiles.threadExited() else {
            lastSeenAlive = now
            return false
        }
        sayThreadExited(tid: procFiles.tid, during: true)
        _ = finishIfEnded(now: now, exitedAt: max(lastSeenAlive, recording.spanStart))
        if !thread.probe.threadPerSpan { forgetThread() }
        return true
    }

    /// The span `sequence` is open but its thread exited before the watchdog tracked it.
    private func threadExitedUntracked(sequence: UInt64) {
        sayThreadExited(tid: procFiles?.tid ?? 0, during: false)
        progress.finishedUntracked(sequence, published: thread.tracker.endedSpans.publishedCount)
        if !thread.probe.threadPerSpan { forgetThread() }
    }

    /// Stops watching a thread that is gone: no more steps, no /proc files.
    private func forgetThread() {
        phase = .threadGone
        procFiles = nil
        cpuBeforeSleep = nil
    }

    /// Says once per monitor that a watched thread exited while its loop was awake.
    private func sayThreadExited(tid: Int32, during tracked: Bool) {
        guard !counters.threadExitSaid.exchange(true, ordering: .relaxed) else { return }
        let name = identity?.name ?? "?"
        reportProblem(
            .threadExited(
                "thread \(tid) (\(name)) exited while its loop was awake"
                    + (tracked ? "; the stall ends where it was last seen alive" : "; that span is not reported")
                    + (thread.probe.threadPerSpan ? "" : "; the monitor no longer watches it")))
    }

    /// The monitor is stopping and its observers are gone, so nothing can end or resume the
    /// tracked span any more. A suspended span ended when it was suspended (even within the
    /// re-entry grace); one still open is ended now: monitoring of it ends here, and leaving an
    /// `inProgress` report would make the next start call it fatal. A span that ended and was
    /// published (also one followed by a newer span) ends where it ended. Long spans that ended
    /// before the watchdog could track them are reported too, as they would have been at its next
    /// step.
    func finishOnStop() {
        // The thread's /proc descriptors close with the watchdog, not when the monitor object
        // is released: after stop() the host has none of ours left open.
        defer { procFiles = nil }
        guard !phase.isThreadGone, meetArmedThread() else { return }
        let now = CStallMonitor_monotonic_ns()
        if recording != nil, finishIfThreadExited(now: now) {
            reportMissedStalls(now: now)
            return
        }
        if recording == nil, !thread.probe.threadPerSpan, procFiles?.threadExited() == true {
            // Its open span ended when the thread exited, unseen: not reported as lasting until now.
            let span = thread.tracker.currentSpan()
            if span.phase != .closed, progress.isPending(span.sequence) {
                threadExitedUntracked(sequence: span.sequence)
            }
            reportMissedStalls(now: now)
            return
        }
        if let recording {
            let span = thread.tracker.currentSpan()
            let suspended = span.sequence == recording.sequence && span.phase == .suspended
            _ = finishIfEnded(now: suspended ? span.suspendedAt &+ settings.reentryGrace : now, stopping: true)
        }
        reportMissedStalls(now: now)
        // The last span is published only when the next one begins, which will not happen now:
        // if the watchdog never tracked it, it ends where the loop went to wait, or now.
        let span = thread.tracker.currentSpan()
        if span.phase != .closed { meetSpanThread(thread.tracker.spanThread.load(ordering: .relaxed)) }
        if let identity, span.phase != .closed, progress.isPending(span.sequence) {
            progress.finishedAtStop(span.sequence)
            let end = span.phase == .suspended ? span.suspendedAt : now
            let passes = thread.tracker.passesSoFar(now: end)
            reportMissed(
                identity: identity, sequence: span.sequence, start: span.start, end: end,
                passes: (passes.passes, passes.longestPass), now: now)
        }
    }

    /// Samples unless the span is expected long work or the monitor is paused; hands an
    /// in-progress snapshot to the writer once the span is past the threshold, then every refresh.
    private func sampleOrSkip(now: UInt64) {
        // Fields are read and written in place: a local copy would share the samples array and
        // make the next append copy it.
        guard let sequence = recording?.sequence, let interval = recording?.interval else { return }
        if controls.isPaused || thread.tracker.expectedLongWorkSequence.load(ordering: .acquiring) == sequence {
            if recording?.suppressed == false && recording?.lastSnapshotAt != 0, let stallID = recording?.stallID {
                emit(.retracted(stallID))
            }
            recording?.suppressed = true
            recording?.lastSnapshotAt = 0
            nextSampleAt = now &+ interval
            return
        }
        if recording?.suppressed == true {
            nextSampleAt = now &+ interval
            return
        }
        sample(now: now)
        guard let recording else { return }
        let stalledFor = now &- recording.spanStart &- min(recording.stoppedNanos, now &- recording.spanStart)
        guard stalledFor >= settings.threshold else { return }
        guard recording.lastSnapshotAt == 0 || now &- recording.lastSnapshotAt >= settings.inProgressRefresh else {
            return
        }
        var snapshot = recording
        snapshot.end = now
        (snapshot.passes, snapshot.longestPass) = thread.tracker.passesSoFar(now: now)
        snapshot.cpuAtTrackingEnd = threadCPUNanos(recording.thread.tid)
        snapshot.trackingEnd = now
        snapshot.noteMachineSuspended(now: machineSuspendedNanos())
        self.recording?.lastSnapshotAt = now
        emit(.inProgress(snapshot))
    }

    private func nextDeadlineWhileTracking(now: UInt64) -> UInt64 {
        let span = thread.tracker.currentSpan()
        let expiry = span.suspendedAt &+ settings.reentryGrace
        if span.phase == .suspended && expiry > now { return min(nextSampleAt, expiry) }
        return nextSampleAt
    }

    /// Whether the monitored thread gave up the CPU voluntarily (slept) since the current span
    /// began. A span suspended for longer than the grace has ended only then; until it has, the
    /// thread was preempted between two passes (a busy machine), not idle. Without the count (the
    /// thread is gone), it has.
    private func threadSleptSinceSpanStart() -> Bool {
        let switches = threadVoluntarySwitches.map { $0() } ?? procFiles?.voluntarySwitches()
        guard let switches else { return true }
        return switches != thread.tracker.spanStartSwitches.load(ordering: .relaxed)
    }

    private func beginTracking(sequence: UInt64, start: UInt64, now: UInt64) {
        guard let identity else { return }
        sampler.forgetReadings()
        recording = newRecording(
            identity: identity, sequence: sequence, start: start, now: now,
            mode: thread.tracker.currentModeName(), cpuAtTrackingStart: threadCPUNanos(identity.tid))
        if stoppedBeforeTracking.sequence == sequence { recording?.stoppedNanos = stoppedBeforeTracking.nanos }
        recording?.suspendedAtTrackingStart = machineSuspendedNanos()
        progress.beganTracking(published: thread.tracker.endedSpans.publishedCount)
        counters.spansTracked.add(1, ordering: .relaxed)
    }

    /// A recording of span `sequence` (begun at `start`) that the watchdog takes up at `now`.
    func newRecording(
        identity: MonitoredThread.Identity, sequence: UInt64, start: UInt64, now: UInt64,
        mode: String?, cpuAtTrackingStart: Int64
    ) -> StallRecording {
        StallRecording(
            thread: identity, sequence: sequence, spanStart: start,
            wallClockStart: Date(timeIntervalSinceNow: -Double(now &- start) / 1e9),
            threshold: settings.threshold, mode: mode, interval: settings.interval,
            requestedInterval: settings.interval, maxSamples: settings.maxSamples,
            cpuAtTrackingStart: cpuAtTrackingStart, trackingStart: now,
            unwinder: SamplingUnwinder.choose(settings.unwinding, symbolicateInProcess: settings.symbolicateInProcess),
            scene: controls.scene)
    }

    /// Ends the recording when its span has ended: a stall is emitted, a short span discarded.
    private func finishIfEnded(now: UInt64, stopping: Bool = false, exitedAt: UInt64? = nil) -> Bool {
        guard var recording else { return false }
        let tracker = thread.tracker
        let span = tracker.currentSpan()
        var end: UInt64
        var passes: Int
        var longest: UInt64
        if let exitedAt {
            // The thread exited inside the span: it ended when the thread was last seen alive.
            end = exitedAt
            (passes, longest) = tracker.passesSoFar(now: exitedAt)
        } else if let ended = tracker.endedSpan(recording.sequence) {
            (end, passes, longest) = (ended.end, ended.passes, ended.longestPass)
        } else if span.sequence == recording.sequence && span.phase == .open {
            guard stopping else { return false }
            end = now
            (passes, longest) = tracker.passesSoFar(now: now)
        } else if span.sequence == recording.sequence && span.phase == .suspended {
            guard now >= span.suspendedAt &+ settings.reentryGrace, stopping || threadSleptSinceSpanStart() else {
                return false
            }
            end = span.suspendedAt
            (passes, longest) = tracker.passesSoFar(now: span.suspendedAt)
        } else {
            // Ended but not published (cannot happen for spans past the lead): best estimate.
            end = now
            (passes, longest) = tracker.passesSoFar(now: now)
        }
        end = max(end, recording.spanStart)
        progress.finishedTracked(recording.sequence)
        self.recording = nil
        let announced = recording.lastSnapshotAt != 0
        func discard(_ counter: borrowing Atomic<Int>) -> Bool {
            counter.add(1, ordering: .relaxed)
            if announced { emit(.retracted(recording.stallID)) }
            return true
        }
        if recording.suppressed || tracker.expectedLongWorkSequence.load(ordering: .acquiring) == recording.sequence {
            return discard(counters.expectedLongWork)
        }
        let duration = end - recording.spanStart
        if duration >= settings.threshold && duration - min(recording.stoppedNanos, duration) < settings.threshold {
            return discard(counters.discardedProcessStopped)
        }
        guard duration >= settings.threshold else { return discard(counters.shortSpansDiscarded) }
        if !settings.reportWhileDebugged && ThreadProcFiles.tracerPID() != 0 {
            return discard(counters.discardedWhileDebugged)
        }
        recording.end = end
        recording.passes = passes
        recording.longestPass = longest
        recording.cpuAtTrackingEnd = threadCPUNanos(recording.thread.tid)
        recording.trackingEnd = CStallMonitor_monotonic_ns()
        recording.noteMachineSuspended(now: machineSuspendedNanos())
        counters.stallsDetected.add(1, ordering: .relaxed)
        emit(.ended(recording))
        return true
    }
}
