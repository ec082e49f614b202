extension ThreadWatch {
    /// Spans longer than the threshold that ended without the watchdog ever tracking them: the
    /// watchdog got no CPU during those stalls (an overloaded machine). The tracker published
    /// their start, end and passes, so each is still reported, exactly timed but without samples,
    /// and says why. The tracker keeps the last ``EndedSpanLog/capacity`` long spans; older ones
    /// were overwritten and are counted (``MonitorCounters/longSpansOverwritten``).
    func reportMissedStalls(now: UInt64) {
        guard identity != nil else { return }
        let missed = thread.tracker.endedSpans(after: progress.lastFinished)
        if let oldest = missed.first, case let lost = progress.overwritten(oldest: oldest.index), lost > 0 {
            counters.longSpansOverwritten.add(lost, ordering: .relaxed)
        }
        for ended in missed {
            progress.finishedMissed(ended.sequence, index: ended.index)
            meetSpanThread(ended.thread)
            guard let identity else { continue }
            reportMissed(
                identity: identity, sequence: ended.sequence, start: ended.start, end: ended.end,
                passes: (ended.passes, ended.longestPass), now: now)
        }
    }

    /// Reports one span the watchdog never tracked, exactly timed, without samples, unless it
    /// is shorter than the threshold, expected, paused, debugged or mostly stopped time.
    func reportMissed(
        identity: MonitoredThread.Identity, sequence: UInt64, start: UInt64, end: UInt64,
        passes: (count: Int, longest: UInt64), now: UInt64
    ) {
        let duration = end &- start
        guard end > start, duration >= settings.threshold, !controls.isPaused,
            thread.tracker.expectedLongWorkSequence.load(ordering: .acquiring) != sequence
        else { return }
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
        var missed = newRecording(
            identity: identity, sequence: sequence, start: start, now: now,
            mode: nil, cpuAtTrackingStart: -1)
        missed.end = end
        missed.passes = passes.count
        missed.longestPass = passes.longest
        missed.stoppedNanos = stopped
        missed.trackingEnd = now
        missed.skip(.watchdogStarved)
        counters.spansTracked.add(1, ordering: .relaxed)
        counters.stallsDetected.add(1, ordering: .relaxed)
        emit(.ended(missed))
    }
}
