import StallReportModel

/// What the sampler read of a thread before choosing how to sample it.
struct SampleReading {
    /// The thread's kernel id.
    var tid: Int32
    /// When the stall's span began (monotonic ns).
    var spanStart: UInt64
    /// Nanoseconds from the span start to the reading.
    var offset: UInt64
    /// The scheduler state.
    var state: SchedulerState
    /// Whether and where it is in a syscall.
    var syscallState: ThreadProcFiles.SyscallState
    /// The syscall it sleeps in, by name.
    var syscallName: String?
    /// The PC `/proc` gives of a thread asleep in the kernel.
    var knownPC: UInt?

    /// Reads thread `files.tid` at `now` for a span begun at `spanStart`.
    init(_ files: ThreadProcFiles, now: UInt64, spanStart: UInt64) {
        tid = files.tid
        self.spanStart = spanStart
        offset = now &- spanStart
        // The syscall file first: a stack copied from /proc is kept only while that file reads
        // the same (and the CPU time stands still), so a state read after it is the state the
        // stack was taken in. Read before it, a thread that spun then entered a syscall or a fault
        // (a page fault, an allocator's mmap) would give an asleep stack marked running.
        syscallState = files.syscallState()
        state = files.schedulerState()
        switch syscallState {
        case .inSyscall(let number, _, let pc):
            syscallName = SyscallTable.name(number)
            knownPC = pc
        case .blockedOutsideSyscall(_, let pc):
            knownPC = pc
        case .running, .unknown:
            break
        }
    }

    /// A sample without a stack that says `note`: the syscall's PC when it is known.
    func sampleWithoutStack(note: String) -> RawSample {
        let kind: StallReport.Sample.Kind = syscallName != nil && knownPC != nil ? .syscall : .none
        return RawSample(
            offset: offset, kind: kind, threadState: state, syscall: syscallName, note: note,
            addresses: kind == .syscall ? knownPC.map { [$0] } ?? [] : [], truncated: false)
    }
}
