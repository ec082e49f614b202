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
    private let emit: (StallEvent) -> Void
    private var procFiles: ThreadProcFiles?
    private var identity: MonitoredThread.Identity?
    /// Stack mappings of span threads that never armed themselves, by kernel thread id.
    private var mappedStacks: [Int32: SnapshotUnwinder.StackBounds] = [:]
    private var recording: StallRecording?
    /// The watched thread (of a probe with one thread) exited during a span: nothing is left to
    /// watch, and the watchdog no longer looks at it.
    private var threadGone = false
    /// When the thread of the tracked span was last seen alive (monotonic ns).
    private var lastSeenAlive: UInt64 = 0
    private var nextSampleAt: UInt64 = 0
    private var lastFinishedSequence: UInt64 = 0
    /// Publishing index (``EndedSpanLog``) of the first long span the watchdog has not yet dealt
    /// with: a missed span found with a higher index means the ones between were overwritten.
    private var nextUncheckedIndex: UInt64 = 0
    /// The index the tracked span gets when it is published (nothing else can be published
    /// between the start of tracking and its end).
    private var trackedSpanIndex: UInt64 = 0
    private var frameBuffer: [UInt]
    /// Process-stopped time noticed before the watchdog began tracking span `sequence`.
    private var stoppedBeforeTracking: (sequence: UInt64, nanos: UInt64) = (0, 0)
    /// Time the machine has spent suspended since boot (``SuspendClock``; replaced in tests to
    /// simulate a suspend).
    var machineSuspendedNanos: () -> UInt64 = SuspendClock.suspendedNanos
    /// The monitored thread's voluntary context switches (replaced in tests; by default read
    /// from `/proc`).
    var threadVoluntarySwitches: (() -> UInt64?)?
    /// CPU time of a thread in nanoseconds, -1 when it cannot be read (replaced in tests).
    var threadCPUNanos: (pid_t) -> Int64 = CStallMonitor_thread_cpu_ns
    /// Says a problem through the monitor's logger and statistics.
    var reportProblem: (StallMonitorError) -> Void = { _ in }
    /// Whether the sampling signal still runs the monitor's handler (replaced in tests).
    var samplingHandlerInstalled: () -> Bool = { CStallMonitor_sampler_handler_installed() != 0 }
    /// Reads the async callers of samples that ran in a task (shared by the watchdog's watches;
    /// nil: not read, as for loops that run no tasks).
    var asyncChains: AsyncChainSource?
    /// When the watchdog last went to sleep with a span open, and the thread's CPU time then.
    private var cpuBeforeSleep: (at: UInt64, cpu: Int64)?

    init(thread: MonitoredThread, settings: Settings, counters: MonitorCounters, controls: MonitorControls, emit: @escaping (StallEvent) -> Void) {
        self.thread = thread
        self.settings = settings
        self.counters = counters
        self.controls = controls
        self.emit = emit
        self.frameBuffer = [UInt](repeating: 0, count: settings.maxFrames)
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
            tid: tid, name: ThreadProcFiles.threadName(tid: tid), isMainThread: tid == getpid(), loopKind: thread.loopKind,
            armingProblems: thread.armingProblems)
        procFiles = ThreadProcFiles(tid: tid)
        return true
    }

    /// Makes `tid` (a span's thread, ``SpanTracker/spanThread``; 0: the armed thread) the thread
    /// the watch samples and reports: a loop whose thread changes from span to span (the Dispatch
    /// main queue) is met again, identity and /proc files, whenever a span runs on another thread.
    private func meetSpanThread(_ tid: Int32) {
        guard tid != 0, identity?.tid != tid, recording == nil else { return }
        identity = MonitoredThread.Identity(
            tid: tid, name: ThreadProcFiles.threadName(tid: tid), isMainThread: tid == getpid(), loopKind: thread.loopKind,
            armingProblems: thread.armingProblems(of: tid))
        procFiles = ThreadProcFiles(tid: tid)
        mappedStacks[tid] = nil  // looked up again: the id may be a new thread's
        lastRunningReading = nil
        blockedMaskSeen = false
    }

    /// The stack bounds of thread `tid`: known when it armed itself, otherwise the mapping that
    /// holds its stack pointer `sp` (a worker that never ran the probe's work), cached per thread.
    private func stackBounds(of tid: Int32, sp: UInt?) -> SnapshotUnwinder.StackBounds? {
        // Bounds that do not hold the known stack pointer are another thread's (a reused id).
        func holds(_ bounds: SnapshotUnwinder.StackBounds) -> Bool { sp.map { bounds.low <= $0 && $0 < bounds.high } ?? true }
        if let bounds = thread.stackBounds(of: tid), holds(bounds) { return bounds }
        if let cached = mappedStacks[tid], holds(cached) { return cached }
        guard let sp else { return nil }
        var low: UInt = 0
        var high: UInt = 0
        guard CStallMonitor_mapping_containing(sp, &low, &high) == 0 else { return nil }
        if mappedStacks.count > 64 { mappedStacks.removeAll() }
        mappedStacks[tid] = .init(low: low, high: high)
        return mappedStacks[tid]
    }

    /// Whether a span is open now (used to avoid parking while one is).
    var hasOpenSpan: Bool {
        guard !threadGone, thread.armedTID.load(ordering: .acquiring) != 0 || identity != nil else { return false }
        let span = thread.tracker.currentSpan()
        return span.phase == .open && span.sequence != lastFinishedSequence
    }

    /// Does what is due at `now`; returns when it next needs to run, nil when nothing is pending.
    func step(now: UInt64) -> UInt64? {
        guard !threadGone, meetArmedThread() else { return nil }
        if recording != nil {
            if finishIfEnded(now: now) { return step(now: now) }
            if finishIfThreadExited(now: now) { return step(now: now) }
            if now >= nextSampleAt { sampleOrSkip(now: now) }
            return nextDeadlineWhileTracking(now: now)
        }
        reportMissedStalls(now: now)
        let span = thread.tracker.currentSpan()
        guard span.phase != .closed, span.sequence != lastFinishedSequence else { return nil }
        if span.phase == .suspended {
            let expiry = span.suspendedAt &+ settings.reentryGrace
            if now < expiry {
                if span.start &+ settings.lead > span.suspendedAt { return expiry }
            } else if threadSleptSinceSpanStart() {
                // Ended before the watchdog got to it. A long one is published when the loop wakes
                // again, and reportMissedStall takes it then; a short one is done with.
                if span.suspendedAt &- span.start < settings.lead {
                    lastFinishedSequence = span.sequence
                    nextUncheckedIndex = max(nextUncheckedIndex, thread.tracker.endedSpans.publishedCount)
                }
                return nil
            }
            // Past the grace without having slept: preempted between two passes, the span goes on.
        }
        let trackFrom = span.start &+ settings.lead
        if now < trackFrom { return trackFrom }
        meetSpanThread(thread.tracker.spanThread.load(ordering: .relaxed))
        if procFiles?.threadExited() == true {
            // It exited inside the span, at a time nobody saw: not a stall anyone can measure.
            threadExitedUntracked(sequence: span.sequence)
            return step(now: now)
        }
        beginTracking(sequence: span.sequence, start: span.start, now: now)
        lastSeenAlive = now
        sampleOrSkip(now: now)
        return nextDeadlineWhileTracking(now: now)
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
        lastFinishedSequence = sequence
        nextUncheckedIndex = max(nextUncheckedIndex, thread.tracker.endedSpans.publishedCount)
        if !thread.probe.threadPerSpan { forgetThread() }
    }

    /// Stops watching a thread that is gone: no more steps, no /proc files.
    private func forgetThread() {
        threadGone = true
        procFiles = nil
        cpuBeforeSleep = nil
    }

    /// Says once per monitor that a watched thread exited while its loop was awake.
    private func sayThreadExited(tid: Int32, during tracked: Bool) {
        guard !counters.threadExitSaid.exchange(true, ordering: .relaxed) else { return }
        let name = identity?.name ?? "?"
        reportProblem(.threadExited(
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
        guard !threadGone, meetArmedThread() else { return }
        let now = CStallMonitor_monotonic_ns()
        if recording != nil, finishIfThreadExited(now: now) {
            reportMissedStalls(now: now)
            return
        }
        if recording == nil, !thread.probe.threadPerSpan, procFiles?.threadExited() == true {
            // Its open span ended when the thread exited, unseen: not reported as lasting until now.
            let span = thread.tracker.currentSpan()
            if span.phase != .closed, span.sequence != lastFinishedSequence { threadExitedUntracked(sequence: span.sequence) }
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
        if let identity, span.phase != .closed, span.sequence != lastFinishedSequence {
            lastFinishedSequence = span.sequence
            let end = span.phase == .suspended ? span.suspendedAt : now
            let passes = thread.tracker.passesSoFar(now: end)
            reportMissed(identity: identity, sequence: span.sequence, start: span.start, end: end,
                         passes: (passes.passes, passes.longestPass), now: now)
        }
    }

    /// Spans longer than the threshold that ended without the watchdog ever tracking them: the
    /// watchdog got no CPU during those stalls (an overloaded machine). The tracker published
    /// their start, end and passes, so each is still reported, exactly timed but without samples,
    /// and says why. The tracker keeps the last ``EndedSpanLog/capacity`` long spans; older ones
    /// were overwritten and are counted (``MonitorCounters/longSpansOverwritten``).
    private func reportMissedStalls(now: UInt64) {
        guard identity != nil else { return }
        let missed = thread.tracker.endedSpans(after: lastFinishedSequence)
        if let oldest = missed.first, oldest.index > nextUncheckedIndex {
            counters.longSpansOverwritten.add(Int(oldest.index - nextUncheckedIndex), ordering: .relaxed)
        }
        for ended in missed {
            lastFinishedSequence = ended.sequence
            nextUncheckedIndex = ended.index &+ 1
            meetSpanThread(ended.thread)
            guard let identity else { continue }
            reportMissed(identity: identity, sequence: ended.sequence, start: ended.start, end: ended.end,
                         passes: (ended.passes, ended.longestPass), now: now)
        }
    }

    /// Reports one span the watchdog never tracked, exactly timed, without samples, unless it
    /// is shorter than the threshold, expected, paused, debugged or mostly stopped time.
    private func reportMissed(identity: MonitoredThread.Identity, sequence: UInt64, start: UInt64, end: UInt64,
                              passes: (count: Int, longest: UInt64), now: UInt64) {
        let duration = end &- start
        guard end > start, duration >= settings.threshold, !controls.isPaused,
              thread.tracker.expectedLongWorkSequence.load(ordering: .acquiring) != sequence else { return }
        if !settings.reportWhileDebugged && ThreadProcFiles.tracerPID() != 0 {
            counters.discardedWhileDebugged.add(1, ordering: .relaxed)
            return
        }
        // Time the process was stopped (noticed when the watchdog woke) is no stall.
        let stopped = stoppedBeforeTracking.sequence == sequence ? min(stoppedBeforeTracking.nanos, duration) : 0
        if duration - stopped < settings.threshold {
            counters.discardedProcessStopped.add(1, ordering: .relaxed)
            return
        }
        var missed = newRecording(identity: identity, sequence: sequence, start: start, now: now,
                                  mode: nil, cpuAtTrackingStart: -1)
        missed.end = end
        missed.passes = passes.count
        missed.longestPass = passes.longest
        missed.stoppedNanos = stopped
        missed.trackingEnd = now
        missed.skip("watchdogStarved")
        counters.spansTracked.add(1, ordering: .relaxed)
        counters.stallsDetected.add(1, ordering: .relaxed)
        emit(.ended(missed))
    }

    /// The watchdog is about to sleep: while a span is open, notes the monitored thread's CPU
    /// time, so that a late wake can tell a stopped process from a watchdog kept off the CPU.
    func noteWatchdogSleeps(now: UInt64) {
        guard let tid = identity?.tid, hasOpenSpan else {
            cpuBeforeSleep = nil
            return
        }
        cpuBeforeSleep = (now, threadCPUNanos(tid))
    }

    /// The watchdog woke at `now`, `lateness` after its deadline: the whole process was stopped
    /// (SIGSTOP, a debugger), and that time is not the loop stalling. Except for the time the
    /// watchdog is known to have waited for a CPU (`waitedForCPU`, from the scheduler's
    /// statistics) or the monitored thread is seen to have run on a CPU meanwhile: then the process
    /// was not stopped, the watchdog only waited for a CPU (an overloaded machine).
    func noteProcessStopped(lateness: UInt64, now: UInt64, waitedForCPU: UInt64? = nil) {
        var stopped = lateness - min(lateness, waitedForCPU ?? 0)
        if let before = cpuBeforeSleep, let tid = identity?.tid, before.cpu >= 0 {
            let cpu = threadCPUNanos(tid)
            if cpu >= before.cpu {
                let slept = now &- before.at
                let ran = UInt64(cpu - before.cpu)
                stopped = min(stopped, slept > ran ? slept - ran : 0)
            }
        }
        cpuBeforeSleep = nil
        chargeStoppedTime(stopped)
    }

    /// The watchdog, parked since `parkedAt` with no span open, woke at `now`. A span start wakes
    /// it at once, so if the span that began meanwhile began more than `stoppedAfter` ago, the
    /// delay not spent waiting for a CPU (`waitedForCPU`) is time the process was stopped (the
    /// monitored thread cannot tell: it was stopped too).
    func noteWokeFromPark(parkedAt: UInt64, now: UInt64, stoppedAfter: UInt64, waitedForCPU: UInt64) {
        guard thread.armedTID.load(ordering: .acquiring) != 0, recording == nil else { return }
        // The first span that began since the park woke the watchdog; the stop fell after its start.
        let span = thread.tracker.currentSpan()
        var began: (sequence: UInt64, start: UInt64)?
        if let ended = thread.tracker.endedSpans(after: lastFinishedSequence).first, ended.start > parkedAt {
            began = (ended.sequence, ended.start)
        } else if span.phase != .closed && span.sequence != lastFinishedSequence && span.start > parkedAt {
            began = (span.sequence, span.start)
        }
        guard let began, now > began.start &+ stoppedAfter else { return }
        let lateness = now - began.start
        chargeStoppedTime(lateness - min(lateness, waitedForCPU), to: began.sequence)
    }

    /// Charges time the process was stopped to the span it fell in: span `sequence` when known,
    /// else the one being recorded, else the one open now, else the last long one that ended
    /// before the watchdog got to it.
    private func chargeStoppedTime(_ stopped: UInt64, to known: UInt64? = nil) {
        guard stopped > 0 else { return }
        if recording != nil && (known == nil || known == recording?.sequence) {
            recording?.stoppedNanos += stopped
            return
        }
        let span = thread.tracker.currentSpan()
        let openSpan = span.phase != .closed && span.sequence != lastFinishedSequence ? span.sequence : nil
        guard let sequence = known ?? openSpan ?? thread.tracker.endedSpans(after: lastFinishedSequence).last?.sequence
        else { return }
        if stoppedBeforeTracking.sequence != sequence { stoppedBeforeTracking = (sequence, 0) }
        stoppedBeforeTracking.nanos += stopped
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
        guard recording.lastSnapshotAt == 0 || now &- recording.lastSnapshotAt >= settings.inProgressRefresh else { return }
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

    /// Sampling signal handlers on thread `tid` now: running, and entered so far.
    private func handlerActivity(_ tid: Int32) -> (running: Int32, entered: UInt64) {
        var running: Int32 = 0
        var entered: UInt64 = 0
        CStallMonitor_sampler_handler_activity(tid, &running, &entered)
        return (running, entered)
    }

    /// Counts a stack the watchdog took and unwound, begun at `began`.
    private func countStack(since began: UInt64) {
        counters.stacksTaken.add(1, ordering: .relaxed)
        counters.stackNanoseconds.add(Int(CStallMonitor_monotonic_ns() &- began), ordering: .relaxed)
    }

    private func beginTracking(sequence: UInt64, start: UInt64, now: UInt64) {
        guard let identity else { return }
        lastRunningReading = nil
        blockedMaskSeen = false
        recording = newRecording(identity: identity, sequence: sequence, start: start, now: now,
                                 mode: thread.tracker.currentModeName(), cpuAtTrackingStart: threadCPUNanos(identity.tid))
        if stoppedBeforeTracking.sequence == sequence { recording?.stoppedNanos = stoppedBeforeTracking.nanos }
        recording?.suspendedAtTrackingStart = machineSuspendedNanos()
        trackedSpanIndex = thread.tracker.endedSpans.publishedCount
        counters.spansTracked.add(1, ordering: .relaxed)
    }

    /// A recording of span `sequence` (begun at `start`) that the watchdog takes up at `now`.
    private func newRecording(identity: MonitoredThread.Identity, sequence: UInt64, start: UInt64, now: UInt64,
                              mode: String?, cpuAtTrackingStart: Int64) -> StallRecording {
        StallRecording(
            thread: identity, sequence: sequence, spanStart: start,
            wallClockStart: Date(timeIntervalSinceNow: -Double(now &- start) / 1e9),
            threshold: settings.threshold, mode: mode, interval: settings.interval,
            requestedInterval: settings.interval, maxSamples: settings.maxSamples,
            cpuAtTrackingStart: cpuAtTrackingStart, trackingStart: now,
            unwinder: SamplingUnwinder.choose(settings.unwinding, symbolicateInProcess: settings.symbolicateInProcess), scene: controls.scene)
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
            guard now >= span.suspendedAt &+ settings.reentryGrace, stopping || threadSleptSinceSpanStart() else { return false }
            end = span.suspendedAt
            (passes, longest) = tracker.passesSoFar(now: span.suspendedAt)
        } else {
            // Ended but not published (cannot happen for spans past the lead): best estimate.
            end = now
            (passes, longest) = tracker.passesSoFar(now: now)
        }
        end = max(end, recording.spanStart)
        lastFinishedSequence = recording.sequence
        // Published (or to be published) at trackedSpanIndex, unless the monitor stops first.
        nextUncheckedIndex = max(nextUncheckedIndex, trackedSpanIndex &+ 1)
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

    /// Says once per monitor that the host took the sampling signal over.
    private func signalTakenOver() {
        guard !counters.signalTakenOverSaid.exchange(true, ordering: .relaxed) else { return }
        reportProblem(.signalTakenOver(
            "signal \(settings.signal) no longer runs the monitor's handler (the host installed its own, SIG_DFL or SIG_IGN after start); "
                + "running threads are not signalled and get no stack until it is back, threads asleep in a syscall still get theirs"))
    }

    /// How one attempt went, for the cadence: sampled (or skipped), or asked to look again
    /// shortly because the thread was not yet clearly running in user space.
    private enum Attempt {
        case done
        case lookAgain
    }

    /// A reading of the thread while it ran on a CPU: when, its CPU time and voluntary switches.
    private struct RunningReading {
        var at: UInt64
        var cpu: Int64
        var switches: UInt64?
    }

    /// The latest reading that found the thread running; nil after any reading that did not
    /// (asleep, unreadable), after a refused attempt and when tracking begins.
    private var lastRunningReading: RunningReading?
    /// The thread's mask was seen blocking the sampling signal once, with no handler running:
    /// looked at again before the sample says so.
    private var blockedMaskSeen = false
    /// Attempts in a row that found the process-wide sampler busy with another monitor's request
    /// (two watchdogs tracking stalls that began together sample in step): each is tried again
    /// after a short look-again delay, up to ``maxBusyRetries`` times, before the sample says so.
    private var busyRetries = 0
    static let maxBusyRetries = 8

    /// A thread found running is signalled only when it has run this much CPU time since the
    /// previous reading, without sleeping in between: a thread that just woke from a syscall reads
    /// as running while the kernel finishes the syscall (or while it waits for a CPU), and a signal
    /// then would cut the syscall short.
    static let minimumRunBeforeSignal: UInt64 = 100_000
    /// How soon a thread first found running is read again.
    static let lookAgainAfter: UInt64 = 1_000_000

    private func sample(now: UInt64) {
        guard var recording = self.recording, let procFiles else { return }
        let span = thread.tracker.currentSpan()
        if span.sequence == recording.sequence && span.phase == .suspended {
            // The loop is about to wait or waiting: no stall sample now.
            nextSampleAt = now &+ Self.lookAgainAfter
            return
        }
        if recording.samples.isEmpty && recording.attempted == 0 { nextSampleAt = now }
        // Taken out while it is changed: the only reference to its samples, so appending one does
        // not copy the whole array (up to maxSamplesPerStall) every time.
        self.recording = nil
        let attempt = sample(now: now, recording: &recording, procFiles: procFiles)
        self.recording = recording
        switch attempt {
        case .lookAgain:
            nextSampleAt = now &+ min(Self.lookAgainAfter, recording.interval)
        case .done:
            nextSampleAt = max(now &+ recording.interval / 2, nextSampleAt &+ recording.interval)
            if nextSampleAt < now { nextSampleAt = now &+ recording.interval }
        }
    }

    /// Whether span `sequence` ended (or the loop went to wait) at or before `time`.
    private func spanEnded(_ sequence: UInt64, atOrBefore time: UInt64) -> Bool {
        let span = thread.tracker.currentSpan()
        if span.sequence == sequence {
            switch span.phase {
            case .open: return false
            case .suspended: return span.suspendedAt <= time
            case .closed: break
            }
        }
        if let ended = thread.tracker.endedSpan(sequence) { return ended.end <= time }
        return true
    }

    private func sample(now: UInt64, recording: inout StallRecording, procFiles: ThreadProcFiles) -> Attempt {
        let offset = now &- recording.spanStart
        let state = procFiles.schedulerState()
        let syscallState = procFiles.syscallState()
        var syscallName: String?
        var knownPC: UInt?
        switch syscallState {
        case .inSyscall(let number, _, let pc):
            syscallName = SyscallTable.name(number)
            knownPC = pc
        case .blockedOutsideSyscall(_, let pc):
            knownPC = pc
        case .running, .unknown:
            break
        }
        let tid = recording.thread.tid
        // Checks that the sample still belongs to the stall: one whose span ended (or whose loop
        // went to wait) before the sample was complete is discarded and counted.
        func keep(_ sample: RawSample, takenBy: UInt64) -> Bool {
            if spanEnded(recording.sequence, atOrBefore: takenBy) {
                recording.skip("afterSpanEnd")
                return false
            }
            recording.append(sample)
            return true
        }
        func noStack(_ reason: String, note: String) {
            recording.skip(reason)
            let kind: StallReport.Sample.Kind = syscallName != nil && knownPC != nil ? .syscall : .none
            recording.append(RawSample(
                offset: offset, kind: kind, threadState: state, syscall: syscallName, note: note,
                addresses: kind == .syscall ? [knownPC!] : [], truncated: false))
        }

        switch syscallState {
        case .inSyscall(_, let sp, let pc), .blockedOutsideSyscall(let sp, let pc):
            // Asleep in the kernel (or blocked in a fault): never signalled. Its user stack is
            // frozen; copy it and unwind the copy here, if the thread did not run meanwhile.
            lastRunningReading = nil
            recording.attempted += 1
            guard let backend = recording.unwinder.snapshot, let bounds = stackBounds(of: tid, sp: sp) else {
                noStack(recording.unwinder.name == "unavailable" ? "noUnwinder" : "blockedWithoutLibdw",
                        note: "not interrupted: without a snapshot unwinder only the syscall's PC is known")
                return .done
            }
            // Any run of the thread adds to its CPU time: unchanged time and syscall file after
            // the copy mean the copy is of the stack it slept on.
            let began = CStallMonitor_monotonic_ns()
            let cpuBefore = threadCPUNanos(tid)
            let outcome = SnapshotUnwinder.shared.unwindBlocked(
                tid: tid, sp: sp, pc: pc, bounds: bounds, copyBytes: settings.stackCopyBytes,
                maxFrames: settings.maxFrames, backend: backend,
                stillAsleep: { cpuBefore >= 0 && procFiles.syscallState() == syscallState && threadCPUNanos(tid) == cpuBefore })
            if case .stack = outcome { countStack(since: began) }
            switch outcome {
            case .stack(let frames, let complete):
                var sample = RawSample(
                    offset: offset, kind: .stack, threadState: state, syscall: syscallName, note: nil,
                    addresses: frames, truncated: !complete, unwinder: backend.name, interrupted: false)
                sample.asyncChain = asyncChain(tid: tid, physical: frames, recording: &recording)
                if keep(sample, takenBy: CStallMonitor_monotonic_ns()) {
                    recording.taken += 1
                    counters.samplesTaken.add(1, ordering: .relaxed)
                }
            case .threadMoved:
                recording.skip("threadMoved")
            case .failed(let why):
                noStack("unwindFailed", note: "not interrupted; no stack: \(why)")
            case .signal:
                noStack("unwindFailed", note: "not interrupted; no stack")
            }
            return .done

        case .running:
            // On a CPU, in user space or in the kernel. Signal it only once it has clearly run
            // since the last reading without sleeping: then it is not returning from a syscall.
            let cpu = threadCPUNanos(tid)
            let switches = procFiles.voluntarySwitches()
            let reading = RunningReading(at: now, cpu: cpu, switches: switches)
            let previous = lastRunningReading
            lastRunningReading = reading
            guard let previous, now &- previous.at <= 4 &* recording.interval &+ Self.lookAgainAfter else {
                return .lookAgain
            }
            recording.attempted += 1
            // The handler first: a signal the host took over since start (its own handler, or
            // SIG_DFL, whose action for a real-time signal terminates the process, or SIG_IGN)
            // is never sent.
            guard samplingHandlerInstalled() else {
                signalTakenOver()
                noStack("signalTakenOver", note: "not interrupted: the sampling signal \(settings.signal) no longer runs the monitor's handler")
                return .done
            }
            // The mask next: a thread that blocks the signal is never signalled, whatever it runs.
            let handlersBefore = handlerActivity(tid)
            if let masks = procFiles.signalMasks() {
                if ThreadProcFiles.SignalMasks.contains(masks.blocked, settings.signal) {
                    // The kernel blocks the signal while its handler runs (from delivery to its
                    // return): a late handler of a sample that timed out, or one preempted after
                    // answering, is not the thread blocking the signal. Only a mask seen blocked
                    // twice, 1 ms apart, with no handler around it, is the thread's own.
                    let handlersAfter = handlerActivity(tid)
                    let handlerActive = handlersBefore.running > 0 || handlersAfter.running > 0
                        || handlersAfter.entered != handlersBefore.entered
                    if handlerActive {
                        blockedMaskSeen = false
                        noStack("busy", note: "the previous sample's signal handler had not returned yet")
                    } else if !blockedMaskSeen {
                        blockedMaskSeen = true
                        recording.attempted -= 1
                        return .lookAgain
                    } else {
                        blockedMaskSeen = false
                        noStack("signalBlocked", note: "the thread blocks the sampling signal \(settings.signal)")
                    }
                    return .done
                }
                blockedMaskSeen = false
                if ThreadProcFiles.SignalMasks.contains(masks.pendingForThread, settings.signal) {
                    noStack("signalPending", note: "an earlier sampling signal is still pending")
                    return .done
                }
            }
            guard cpu >= 0, previous.cpu >= 0, cpu - previous.cpu >= Int64(Self.minimumRunBeforeSignal),
                  let switches, switches == previous.switches else {
                noStack("notClearlyRunning", note: "not interrupted: the thread may be finishing a syscall or waiting for a CPU")
                lastRunningReading = nil
                return .done
            }
            if recording.unwinder.name == "unavailable" {
                noStack("noUnwinder", note: recording.unwinder.note ?? "no unwinder available")
                return .done
            }
            let sentAt = CStallMonitor_monotonic_ns()
            let signalOutcome: StackSampler.Outcome
            var unwinderName = "libunwind"
            var bounds = stackBounds(of: tid, sp: nil)
            let snapshots = recording.unwinder.snapshotsRunningThreads && settings.unwinding == .snapshot
            if bounds == nil, snapshots,
               let sp = SnapshotUnwinder.shared.stackPointer(tid: tid, timeout: settings.sampleTimeout) {
                // A span thread that never armed itself (a Dispatch worker): its stack is the
                // mapping that holds its stack pointer, read from one registers-only snapshot.
                bounds = stackBounds(of: tid, sp: sp)
            }
            if snapshots, let backend = recording.unwinder.snapshot, let bounds {
                switch SnapshotUnwinder.shared.unwindRunning(
                    tid: tid, bounds: bounds, copyBytes: settings.stackCopyBytes, timeout: settings.sampleTimeout,
                    maxFrames: settings.maxFrames, backend: backend) {
                case .stack(let frames, let complete):
                    countStack(since: sentAt)
                    signalOutcome = .stack(frames, truncated: !complete)
                    unwinderName = backend.name
                case .signal(let outcome):
                    signalOutcome = outcome
                case .failed(let why):
                    noStack("unwindFailed", note: "interrupted; no stack: \(why)")
                    return .done
                case .threadMoved:
                    signalOutcome = .busy
                }
            } else {
                signalOutcome = StackSampler.sample(tid: tid, timeout: settings.sampleTimeout, maxFrames: settings.maxFrames, into: &frameBuffer)
            }
            if case .busy = signalOutcome {} else { busyRetries = 0 }
            switch signalOutcome {
            case .stack(let frames, let truncated):
                var sample = RawSample(
                    offset: sentAt &- recording.spanStart, kind: .stack, threadState: state, syscall: nil,
                    note: nil, addresses: frames, truncated: truncated, unwinder: unwinderName, interrupted: true)
                sample.asyncChain = asyncChain(tid: tid, physical: frames, recording: &recording)
                if keep(sample, takenBy: CStallMonitor_monotonic_ns()) {
                    recording.taken += 1
                    counters.samplesTaken.add(1, ordering: .relaxed)
                }
            case .timedOut:
                recording.timedOut += 1
                counters.samplesTimedOut.add(1, ordering: .relaxed)
                recording.append(RawSample(
                    offset: offset, kind: .none, threadState: state, syscall: nil,
                    note: "the thread did not answer within \(settings.sampleTimeout / 1_000_000) ms",
                    addresses: [], truncated: false))
            case .busy:
                if busyRetries < Self.maxBusyRetries {
                    busyRetries += 1
                    recording.attempted -= 1
                    return .lookAgain
                }
                busyRetries = 0
                noStack("busy", note: "an earlier sampling request was still being answered")
            case .unavailable:
                noStack("noUnwinder", note: "the sampler is not installed")
            case .sendFailed:
                noStack("sendFailed", note: "the sampling signal could not be sent")
            case .handlerReplaced:
                signalTakenOver()
                noStack("signalTakenOver", note: "not interrupted: the sampling signal \(settings.signal) no longer runs the monitor's handler")
            }
            return .done

        case .unknown:
            lastRunningReading = nil
            recording.attempted += 1
            noStack("threadUnreadable", note: "the thread's /proc files could not be read")
            return .done
        }
    }
}
