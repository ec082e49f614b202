import CStallMonitor

extension ThreadSampler {
    /// Samples a thread asleep in the kernel (or blocked in a fault), stack pointer `sp` and PC
    /// `pc`: never signalled. Its user stack is frozen; the stack is copied and the copy unwound
    /// here, kept only if the thread did not run meanwhile.
    func sampleBlocked(
        _ reading: SampleReading, sp: UInt, pc: UInt, files: ThreadProcFiles,
        unwinder: SamplingUnwinder
    ) -> SampleOutcome {
        let tid = reading.tid
        guard let backend = unwinder.snapshot, let bounds = stackBounds(of: tid, sp: sp) else {
            return .noStack(
                unwinder.isUnavailable ? .noUnwinder : .blockedWithoutLibdw,
                note: "not interrupted: without a snapshot unwinder only the syscall's PC is known")
        }
        // Any run of the thread adds to its CPU time: unchanged time and syscall file after the
        // copy mean the copy is of the stack it slept on.
        let began = CStallMonitor_monotonic_ns()
        let cpuNanos = threadCPUNanos
        let cpuBefore = cpuNanos(tid)
        let outcome = MonitorProcess.shared.unwinder.unwindBlocked(
            tid: tid, sp: sp, pc: pc, bounds: bounds, copyBytes: settings.stackCopyBytes,
            maxFrames: settings.maxFrames, backend: backend,
            stillAsleep: {
                cpuBefore >= 0 && files.syscallState() == reading.syscallState && cpuNanos(tid) == cpuBefore
            })
        switch outcome {
        case .stack(let frames, let complete):
            countStack(since: began)
            return .stack(
                RawSample(
                    offset: reading.offset, kind: .stack, threadState: reading.state, syscall: reading.syscallName,
                    note: nil,
                    addresses: frames, truncated: !complete, unwinder: backend.name, interrupted: false))
        case .threadMoved:
            return .skipped(.threadMoved)
        case .failed(let why):
            return .noStack(.unwindFailed, note: "not interrupted; no stack: \(why)")
        case .signal:
            return .noStack(.unwindFailed, note: "not interrupted; no stack")
        }
    }
}
