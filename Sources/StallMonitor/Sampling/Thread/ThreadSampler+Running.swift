import CStallMonitor
import StallReportModel

extension ThreadSampler {
    /// Samples a thread on a CPU, in user space or in the kernel: signals it only once it has
    /// clearly run since the last reading without sleeping (then it is not returning from a
    /// syscall), its mask lets the signal through and an unwinder is there.
    func sampleRunning(
        _ reading: SampleReading, files: ThreadProcFiles, now: UInt64, interval: UInt64,
        unwinder: SamplingUnwinder
    ) -> SampleOutcome {
        let cpu = threadCPUNanos(reading.tid)
        let switches = files.voluntarySwitches()
        let waiting = files.waitingNanos()
        let previous = lastRunningReading
        var current = RunningReading(at: now, cpu: cpu, switches: switches, waiting: waiting)
        // Shown running before and not asleep since: still so, whatever this attempt gives.
        if let previous, previous.proven, let switches, switches == previous.switches { current.proven = true }
        lastRunningReading = current
        guard let previous, now &- previous.at <= 4 &* interval &+ Self.lookAgainAfter else { return .lookAgain }
        if let refused = signalRefused(tid: reading.tid, files: files) { return refused }
        // Clearly running: it ran enough since the last reading without sleeping, or it was
        // clearly running before and has not slept since (only kept off the CPU meanwhile).
        guard cpu >= 0, previous.cpu >= 0, let switches, switches == previous.switches else {
            lastRunningReading = nil
            offCPURetries = 0
            return .noStack(
                .notClearlyRunning, note: "not interrupted: the thread may be finishing a syscall or waiting for a CPU")
        }
        guard cpu - previous.cpu >= Int64(Self.minimumRunBeforeSignal) || previous.proven else {
            // Not asleep, but barely ran: kept off the CPU. Looked at again shortly, from the
            // earlier reading, until it has run enough to be signalled.
            lastRunningReading = previous
            if offCPURetries < Self.maxOffCPURetries {
                offCPURetries += 1
                return .lookAgain
            }
            offCPURetries = 0
            return .noStack(
                .notClearlyRunning,
                note: "not interrupted: the thread got too little CPU to be sure it runs in user space")
        }
        offCPURetries = 0
        lastRunningReading?.proven = true
        if unwinder.isUnavailable {
            return .noStack(.noUnwinder, note: unwinder.note ?? "no unwinder available")
        }
        return interrupt(
            reading, unwinder: unwinder, timeout: answerTimeout(since: previous, now: now, waiting: waiting))
    }

    /// How long to wait for the thread's answer: the sample timeout, or longer while the thread
    /// is contended (a loaded machine): it answers only once it runs again, and an answer given
    /// after the wait is lost. Contended: it waited for a CPU for a good share of the time since
    /// `previous` (the kernel counts a wait when it ends), or a recent answer came too late.
    private func answerTimeout(since previous: RunningReading, now: UInt64, waiting: UInt64?) -> UInt64 {
        if let waiting, let before = previous.waiting, waiting >= before, now > previous.at,
            Double(waiting - before) / Double(now - previous.at) >= Self.contendedWaitingShare
        {
            contendedUntil = now &+ Self.contendedFor
        }
        return now < contendedUntil ? settings.sampleTimeout &* Self.contendedTimeoutFactor : settings.sampleTimeout
    }

    /// Why the thread must not be signalled now, nil when it may be. The handler first: a signal
    /// the host took over since start (its own handler, or SIG_DFL, whose action for a real-time
    /// signal terminates the process, or SIG_IGN) is never sent. The mask next: a thread that
    /// blocks the signal is never signalled, whatever it runs.
    private func signalRefused(tid: Int32, files: ThreadProcFiles) -> SampleOutcome? {
        guard samplingHandlerInstalled() else { return Self.signalTakenOver(settings.signal) }
        let handlersBefore = handlerActivity(tid)
        guard let masks = files.signalMasks() else { return nil }
        if ThreadProcFiles.SignalMasks.contains(masks.blocked, settings.signal) {
            return signalBlocked(tid: tid, handlersBefore: handlersBefore)
        }
        blockedMaskSeen = false
        if ThreadProcFiles.SignalMasks.contains(masks.pendingForThread, settings.signal) {
            return .noStack(.signalPending, note: "an earlier sampling signal is still pending")
        }
        return nil
    }

    /// The thread's mask blocks the signal. The kernel blocks it while its handler runs (from
    /// delivery to its return): a late handler of a sample that timed out, or one preempted after
    /// answering, is not the thread blocking the signal. Only a mask seen blocked twice, 1 ms
    /// apart, with no handler around it, is the thread's own.
    private func signalBlocked(tid: Int32, handlersBefore: (running: Int32, entered: UInt64)) -> SampleOutcome {
        let handlersAfter = handlerActivity(tid)
        let handlerActive =
            handlersBefore.running > 0 || handlersAfter.running > 0
            || handlersAfter.entered != handlersBefore.entered
        if handlerActive {
            blockedMaskSeen = false
            return .noStack(.busy, note: "the previous sample's signal handler had not returned yet")
        }
        if !blockedMaskSeen {
            blockedMaskSeen = true
            return .lookAgain
        }
        blockedMaskSeen = false
        return .noStack(.signalBlocked, note: "the thread blocks the sampling signal \(settings.signal)")
    }

    /// Interrupts the thread: a snapshot of its stack unwound here when snapshots unwind running
    /// threads, otherwise libunwind in the handler.
    private func interrupt(_ reading: SampleReading, unwinder: SamplingUnwinder, timeout: UInt64) -> SampleOutcome {
        let tid = reading.tid
        let sentAt = CStallMonitor_monotonic_ns()
        var signalOutcome: StackSampler.Outcome
        var unwinderName = UnwinderName.libunwind
        var bounds = stackBounds(of: tid, sp: nil)
        let snapshots = unwinder.snapshotsRunningThreads && settings.unwinding == .snapshot
        if bounds == nil, snapshots,
            let sp = MonitorProcess.shared.unwinder.stackPointer(tid: tid, timeout: timeout)
        {
            // A span thread that never armed itself (a Dispatch worker): its stack is the mapping
            // that holds its stack pointer, read from one registers-only snapshot.
            bounds = stackBounds(of: tid, sp: sp)
        }
        if snapshots, let backend = unwinder.snapshot, let bounds {
            switch MonitorProcess.shared.unwinder.unwindRunning(
                tid: tid, bounds: bounds, copyBytes: settings.stackCopyBytes, timeout: timeout,
                maxFrames: settings.maxFrames, backend: backend)
            {
            case .stack(let frames, let complete):
                countStack(since: sentAt)
                signalOutcome = .stack(frames, truncated: !complete)
                unwinderName = backend.name
            case .signal(let outcome):
                signalOutcome = outcome
            case .failed(let why):
                return .noStack(.unwindFailed, note: "interrupted; no stack: \(why)")
            case .threadMoved:
                signalOutcome = .busy
            }
        } else {
            signalOutcome = StackSampler.sample(
                tid: tid, timeout: timeout, maxFrames: settings.maxFrames,
                into: &frameBuffer)
        }
        if case .busy = signalOutcome {} else { busyRetries = 0 }
        return outcome(of: signalOutcome, reading: reading, sentAt: sentAt, unwinder: unwinderName, timeout: timeout)
    }

    /// What an interruption sent at `sentAt` gave, as a sample outcome.
    private func outcome(
        of signalOutcome: StackSampler.Outcome, reading: SampleReading, sentAt: UInt64,
        unwinder: UnwinderName, timeout: UInt64
    ) -> SampleOutcome {
        switch signalOutcome {
        case .stack(let frames, let truncated):
            return .stack(
                RawSample(
                    offset: sentAt &- reading.spanStart, kind: .stack, threadState: reading.state, syscall: nil,
                    note: nil, addresses: frames, truncated: truncated, unwinder: unwinder, interrupted: true))
        case .timedOut:
            contendedUntil = CStallMonitor_monotonic_ns() &+ Self.contendedFor
            return .timedOut(note: "the thread did not answer within \(timeout / 1_000_000) ms")
        case .busy:
            if busyRetries < Self.maxBusyRetries {
                busyRetries += 1
                return .lookAgain
            }
            busyRetries = 0
            return .noStack(.busy, note: "an earlier sampling request was still being answered")
        case .unavailable:
            return .noStack(.noUnwinder, note: "the sampler is not installed")
        case .sendFailed:
            return .noStack(.sendFailed, note: Self.sendFailedNote)
        case .handlerReplaced:
            return Self.signalTakenOver(settings.signal)
        }
    }

    /// Why the sampling signal could not be sent: tgkill's errno, and its likely cause.
    static var sendFailedNote: String {
        let code = CStallMonitor_sampler_last_send_errno()
        guard code != 0 else { return "the sampling signal could not be sent" }
        return
            "the sampling signal could not be sent (tgkill: \(CString.errorMessage(code)), \(SyscallDenialWatch.Denial.nameAndCause(code)))"
    }

    /// The outcome of an attempt that found the sampling signal `signal` taken over by the host.
    static func signalTakenOver(_ signal: Int32) -> SampleOutcome {
        .noStack(
            .signalTakenOver,
            note: "not interrupted: the sampling signal \(signal) no longer runs the monitor's handler")
    }

    /// Sampling signal handlers on thread `tid` now: running, and entered so far.
    private func handlerActivity(_ tid: Int32) -> (running: Int32, entered: UInt64) {
        var running: Int32 = 0
        var entered: UInt64 = 0
        CStallMonitor_sampler_handler_activity(tid, &running, &entered)
        return (running, entered)
    }
}
