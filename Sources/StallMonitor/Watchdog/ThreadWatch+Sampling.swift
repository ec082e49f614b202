import CStallMonitor

extension ThreadWatch {
    /// How one attempt went, for the cadence: sampled (or skipped), or asked to look again
    /// shortly because the thread was not yet clearly running in user space.
    enum Attempt {
        /// Sampled, or gave a reason for no stack.
        case done
        /// Look again shortly.
        case lookAgain
    }

    /// Samples the tracked span's thread, unless its loop went to wait, and sets when the next
    /// sample is due.
    func sample(now: UInt64) {
        guard var recording = self.recording, let procFiles else { return }
        let span = thread.tracker.currentSpan()
        if span.sequence == recording.sequence && span.phase == .suspended {
            // The loop is about to wait or waiting: no stall sample now.
            nextSampleAt = now &+ ThreadSampler.lookAgainAfter
            return
        }
        if recording.samples.isEmpty && recording.attempted == 0 { nextSampleAt = now }
        // Taken out while it is changed: the only reference to its samples, so appending one does
        // not copy the whole array (up to maxSamplesPerStall) every time.
        self.recording = nil
        let (outcome, reading) = sampler.sample(
            procFiles, now: now, spanStart: recording.spanStart, interval: recording.interval,
            unwinder: recording.unwinder)
        let attempt = record(outcome, reading: reading, in: &recording)
        self.recording = recording
        switch attempt {
        case .lookAgain:
            nextSampleAt = now &+ min(ThreadSampler.lookAgainAfter, recording.interval)
        case .done:
            nextSampleAt = max(now &+ recording.interval / 2, nextSampleAt &+ recording.interval)
            if nextSampleAt < now { nextSampleAt = now &+ recording.interval }
        }
    }

    /// Records what one attempt gave in `recording`: every outcome but a look-again is an attempt.
    private func record(_ outcome: SampleOutcome, reading: SampleReading, in recording: inout StallRecording) -> Attempt
    {
        switch outcome {
        case .lookAgain:
            return .lookAgain
        case .stack(var sample):
            recording.attempted += 1
            sample.asyncChain = asyncChain(tid: reading.tid, physical: sample.addresses, recording: &recording)
            // A sample whose span ended (or whose loop went to wait) before it was complete is
            // discarded and counted.
            if spanEnded(recording.sequence, atOrBefore: CStallMonitor_monotonic_ns()) {
                recording.skip(.afterSpanEnd)
            } else {
                recording.append(sample)
                recording.taken += 1
                counters.samplesTaken.add(1, ordering: .relaxed)
            }
        case .noStack(let reason, let note):
            recording.attempted += 1
            if reason == .signalTakenOver { signalTakenOver() }
            recording.skip(reason)
            recording.append(reading.sampleWithoutStack(note: note))
        case .skipped(let reason):
            recording.attempted += 1
            recording.skip(reason)
        case .timedOut(let note):
            recording.attempted += 1
            recording.timedOut += 1
            counters.samplesTimedOut.add(1, ordering: .relaxed)
            recording.append(reading.sampleWithoutStack(note: note))
        }
        return .done
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

    /// Says once per monitor that the host took the sampling signal over.
    private func signalTakenOver() {
        guard !counters.signalTakenOverSaid.exchange(true, ordering: .relaxed) else { return }
        reportProblem(
            .signalTakenOver(
                "signal \(settings.signal) no longer runs the monitor's handler (the host installed its own, SIG_DFL or SIG_IGN after start); "
                    + "running threads are not signalled and get no stack until it is back, threads asleep in a syscall still get theirs"
            ))
    }
}
