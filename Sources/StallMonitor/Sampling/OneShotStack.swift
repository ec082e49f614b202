import CStallMonitor

/// One stack of a thread the watchdog does not track (a concurrency-pool worker named in a
/// starvation report), taken now the way a stall's samples are: a thread asleep in the kernel is
/// unwound from a copy of its frozen stack without a signal; a running one from a snapshot its
/// signal handler copied, unless it blocks the signal or no snapshot unwinder loads.
enum OneShotStack {
    /// What a one-shot stack needs to know.
    struct Settings {
        var unwinder: SamplingUnwinder
        var signal: Int32
        var sampleTimeout: UInt64
        var stackCopyBytes: Int
        var maxFrames: Int
    }

    /// The stack of `tid` now, as a sample at `offset` (nanoseconds from the stall's start).
    static func take(tid: Int32, offset: UInt64, settings: Settings) -> RawSample {
        let files = ThreadProcFiles(tid: tid)
        let state = files.schedulerState()
        let syscallState = files.syscallState()
        func none(_ note: String, syscall: String? = nil, pc: UInt? = nil) -> RawSample {
            RawSample(
                offset: offset, kind: pc == nil ? .none : .syscall, threadState: state, syscall: syscall, note: note,
                addresses: pc.map { [$0] } ?? [], truncated: false)
        }
        func stack(
            _ outcome: SnapshotUnwinder.Outcome, backend: SnapshotUnwinder.Backend, syscall: String?, interrupted: Bool,
            pc: UInt?
        ) -> RawSample {
            switch outcome {
            case .stack(let frames, let complete):
                return RawSample(
                    offset: offset, kind: .stack, threadState: state, syscall: syscall, note: nil, addresses: frames,
                    truncated: !complete, unwinder: backend.name, interrupted: interrupted)
            case .failed(let why):
                return none("no stack: \(why)", syscall: syscall, pc: pc)
            case .threadMoved:
                return none("the thread woke while its stack was copied", syscall: syscall, pc: pc)
            case .signal:
                return none("the thread did not answer the sampling signal", syscall: syscall, pc: pc)
            }
        }
        switch syscallState {
        case .inSyscall(_, let sp, let pc), .blockedOutsideSyscall(let sp, let pc):
            var syscall: String?
            if case .inSyscall(let number, _, _) = syscallState { syscall = SyscallTable.name(number) }
            var low: UInt = 0
            var high: UInt = 0
            guard let backend = settings.unwinder.snapshot, CStallMonitor_mapping_containing(sp, &low, &high) == 0
            else {
                return none(
                    "not interrupted: without a snapshot unwinder only the syscall's PC is known", syscall: syscall,
                    pc: pc)
            }
            let outcome = MonitorProcess.shared.unwinder.unwindBlocked(
                tid: tid, sp: sp, pc: pc, bounds: .init(low: low, high: high), copyBytes: settings.stackCopyBytes,
                maxFrames: settings.maxFrames, backend: backend, stillAsleep: { files.syscallState() == syscallState })
            return stack(outcome, backend: backend, syscall: syscall, interrupted: false, pc: pc)
        case .running:
            if let masks = files.signalMasks(), ThreadProcFiles.SignalMasks.contains(masks.blocked, settings.signal) {
                return none("the thread blocks the sampling signal \(settings.signal)")
            }
            guard let backend = settings.unwinder.snapshot, settings.unwinder.snapshotsRunningThreads,
                let sp = MonitorProcess.shared.unwinder.stackPointer(tid: tid, timeout: settings.sampleTimeout)
            else { return none("running; no snapshot of it could be taken") }
            var low: UInt = 0
            var high: UInt = 0
            guard CStallMonitor_mapping_containing(sp, &low, &high) == 0 else {
                return none("running; its stack mapping is unknown")
            }
            let outcome = MonitorProcess.shared.unwinder.unwindRunning(
                tid: tid, bounds: .init(low: low, high: high), copyBytes: settings.stackCopyBytes,
                timeout: settings.sampleTimeout,
                maxFrames: settings.maxFrames, backend: backend)
            return stack(outcome, backend: backend, syscall: nil, interrupted: true, pc: nil)
        case .unknown:
            return none("the thread's /proc files could not be read")
        }
    }
}
