extension ThreadWatch {
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
        if let ended = thread.tracker.endedSpans(after: progress.lastFinished).first, ended.start > parkedAt {
            began = (ended.sequence, ended.start)
        } else if span.phase != .closed && progress.isPending(span.sequence) && span.start > parkedAt {
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
        let openSpan = span.phase != .closed && progress.isPending(span.sequence) ? span.sequence : nil
        guard let sequence = known ?? openSpan ?? thread.tracker.endedSpans(after: progress.lastFinished).last?.sequence
        else { return }
        if stoppedBeforeTracking.sequence != sequence { stoppedBeforeTracking = (sequence, 0) }
        stoppedBeforeTracking.nanos += stopped
    }
}
