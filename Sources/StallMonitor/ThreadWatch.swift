import CStallMonitor
import Foundation
import StallReportKit

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
        var interruptSleepingSyscalls: Bool
        var signal: Int32
    }

    let thread: MonitoredThread
    let settings: Settings
    let counters: MonitorCounters
    private let emit: (StallRecording) -> Void
    private var procFiles: ThreadProcFiles?
    private var identity: MonitoredThread.Identity?
    private var recording: StallRecording?
    private var nextSampleAt: UInt64 = 0
    private var lastFinishedSequence: UInt64 = 0
    private var frameBuffer: [UInt]

    init(thread: MonitoredThread, settings: Settings, counters: MonitorCounters, emit: @escaping (StallRecording) -> Void) {
        self.thread = thread
        self.settings = settings
        self.counters = counters
        self.emit = emit
        self.frameBuffer = [UInt](repeating: 0, count: settings.maxFrames)
    }

    /// Whether a span is open now (used to avoid parking while one is).
    var hasOpenSpan: Bool {
        guard thread.armedTID.load(ordering: .acquiring) != 0 else { return false }
        let span = thread.tracker.currentSpan()
        return span.phase == .open && span.sequence != lastFinishedSequence
    }

    /// Does what is due at `now`; returns when it next needs to run, nil when nothing is pending.
    func step(now: UInt64) -> UInt64? {
        let tid = thread.armedTID.load(ordering: .acquiring)
        guard tid != 0 else { return nil }
        if identity == nil {
            identity = MonitoredThread.Identity(
                tid: tid, name: ThreadProcFiles.threadName(tid: tid), isMainThread: tid == getpid(), loopKind: "runLoop")
            procFiles = ThreadProcFiles(tid: tid)
        }
        if recording != nil {
            if finishIfEnded(now: now) { return step(now: now) }
            if now >= nextSampleAt { sample(now: now) }
            return nextDeadlineWhileTracking()
        }
        let span = thread.tracker.currentSpan()
        guard span.phase != .closed, span.sequence != lastFinishedSequence else { return nil }
        if span.phase == .suspended {
            let expiry = span.suspendedAt &+ settings.reentryGrace
            if now >= expiry { lastFinishedSequence = span.sequence; return nil }
            if span.start &+ settings.lead > span.suspendedAt { return expiry }
        }
        let trackFrom = span.start &+ settings.lead
        if now < trackFrom { return trackFrom }
        beginTracking(sequence: span.sequence, start: span.start, now: now)
        sample(now: now)
        return nextDeadlineWhileTracking()
    }

    private func nextDeadlineWhileTracking() -> UInt64 {
        let span = thread.tracker.currentSpan()
        if span.phase == .suspended { return min(nextSampleAt, span.suspendedAt &+ settings.reentryGrace) }
        return nextSampleAt
    }

    private func beginTracking(sequence: UInt64, start: UInt64, now: UInt64) {
        guard let identity else { return }
        let wallClockStart = Date(timeIntervalSinceNow: -Double(now &- start) / 1e9)
        recording = StallRecording(
            thread: identity, sequence: sequence, spanStart: start, wallClockStart: wallClockStart,
            threshold: settings.threshold, mode: thread.currentMode(), interval: settings.interval,
            requestedInterval: settings.interval, maxSamples: settings.maxSamples,
            cpuAtTrackingStart: CStallMonitor_thread_cpu_ns(identity.tid), trackingStart: now,
            unwinder: StackSampler.unwinderStatus())
        counters.spansTracked.add(1, ordering: .relaxed)
    }

    /// Ends the recording when its span has ended: a stall is emitted, a short span discarded.
    private func finishIfEnded(now: UInt64) -> Bool {
        guard var recording else { return false }
        let tracker = thread.tracker
        let span = tracker.currentSpan()
        var end: UInt64
        var passes: Int
        var longest: UInt64
        if let ended = tracker.endedSpan(recording.sequence) {
            (end, passes, longest) = (ended.end, ended.passes, ended.longestPass)
        } else if span.sequence == recording.sequence && span.phase == .open {
            return false
        } else if span.sequence == recording.sequence && span.phase == .suspended {
            guard now >= span.suspendedAt &+ settings.reentryGrace else { return false }
            end = span.suspendedAt
            (passes, longest) = tracker.passesSoFar(now: span.suspendedAt)
        } else {
            // Ended but not published (cannot happen for spans past the lead): best estimate.
            end = now
            (passes, longest) = tracker.passesSoFar(now: now)
        }
        end = max(end, recording.spanStart)
        lastFinishedSequence = recording.sequence
        self.recording = nil
        guard end - recording.spanStart >= settings.threshold else {
            counters.shortSpansDiscarded.add(1, ordering: .relaxed)
            return true
        }
        recording.end = end
        recording.passes = passes
        recording.longestPass = longest
        recording.cpuAtTrackingEnd = CStallMonitor_thread_cpu_ns(recording.thread.tid)
        recording.trackingEnd = CStallMonitor_monotonic_ns()
        counters.stallsDetected.add(1, ordering: .relaxed)
        emit(recording)
        return true
    }

    private func sample(now: UInt64) {
        guard var recording = self.recording, let procFiles else { return }
        defer {
            self.recording = recording
            nextSampleAt = max(now &+ recording.interval / 2, nextSampleAt &+ recording.interval)
            if nextSampleAt < now { nextSampleAt = now &+ recording.interval }
        }
        if recording.samples.isEmpty { nextSampleAt = now }
        recording.attempted += 1
        let offset = now &- recording.spanStart
        let state = procFiles.schedulerState()
        let syscallState = procFiles.syscallState()
        var syscallName: String?
        var knownPC: UInt?
        switch syscallState {
        case .inSyscall(let number, let pc):
            syscallName = SyscallTable.name(number)
            knownPC = pc
            if SyscallTable.isInterruptedBySignal(number) && !settings.interruptSleepingSyscalls {
                recording.skip("sleepingSyscall")
                recording.append(RawSample(
                    offset: offset, kind: .syscall, threadState: state, syscall: syscallName,
                    note: "not interrupted: a signal would cut \(syscallName ?? "the syscall") short",
                    addresses: pc == 0 ? [] : [pc], truncated: false))
                return
            }
        case .blockedOutsideSyscall(let pc):
            knownPC = pc
        case .running, .unknown:
            break
        }
        func noStack(_ reason: String, note: String) {
            recording.skip(reason)
            let kind: StallReport.Sample.Kind = syscallName != nil && knownPC != nil ? .syscall : .none
            recording.append(RawSample(
                offset: offset, kind: kind, threadState: state, syscall: syscallName, note: note,
                addresses: kind == .syscall ? [knownPC!] : [], truncated: false))
        }
        if !recording.unwinder.available {
            noStack("noUnwinder", note: recording.unwinder.note ?? "libunwind unavailable")
            return
        }
        if let masks = procFiles.signalMasks() {
            if ThreadProcFiles.SignalMasks.contains(masks.blocked, settings.signal) {
                noStack("signalBlocked", note: "the thread blocks the sampling signal \(settings.signal)")
                return
            }
            if ThreadProcFiles.SignalMasks.contains(masks.pendingForThread, settings.signal) {
                noStack("signalPending", note: "an earlier sampling signal is still pending")
                return
            }
        }
        let sentAt = CStallMonitor_monotonic_ns()
        switch StackSampler.sample(tid: recording.thread.tid, timeout: settings.sampleTimeout, maxFrames: settings.maxFrames, into: &frameBuffer) {
        case .stack(let frames, let truncated):
            recording.taken += 1
            counters.samplesTaken.add(1, ordering: .relaxed)
            recording.append(RawSample(
                offset: sentAt &- recording.spanStart, kind: .stack, threadState: state, syscall: syscallName,
                note: nil, addresses: frames, truncated: truncated))
        case .timedOut:
            recording.timedOut += 1
            counters.samplesTimedOut.add(1, ordering: .relaxed)
            recording.append(RawSample(
                offset: offset, kind: knownPC != nil && syscallName != nil ? .syscall : .none, threadState: state,
                syscall: syscallName, note: "the thread did not answer within \(settings.sampleTimeout / 1_000_000) ms",
                addresses: knownPC != nil && syscallName != nil ? [knownPC!] : [], truncated: false))
        case .busy:
            noStack("busy", note: "an earlier sampling request was still being answered")
        case .unavailable:
            noStack("noUnwinder", note: "the sampler is not installed")
        case .sendFailed:
            noStack("sendFailed", note: "the sampling signal could not be sent")
        }
    }
}
