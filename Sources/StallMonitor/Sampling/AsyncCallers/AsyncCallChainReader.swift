import CStallMonitor

/// The async callers of a sampled thread's running task, read on the watchdog right after the
/// thread's stack (nothing runs on the sampled thread; every read is a `process_vm_readv`, which
/// fails instead of faulting).
///
/// When a partial function of an async function runs, the functions that awaited it are not on
/// the thread's stack: they are suspended in the task's chain of `AsyncContext`s, each holding
/// its caller's context (`Parent`) and the caller's partial function to resume (`ResumeParent`).
/// The walk starts at the innermost context known:
///
/// 1. The running async function's own context, which Swift's async frame keeps just below its
///    saved frame pointer (`[fp - 8]`, the frame the runtime called when the job began). It is
///    looked for near the top of the thread's stack and used only when the frame's return address
///    is one of the sample's and the context's parents lead to the task's `ResumeContext` (so it
///    belongs to this job of this task). The frames of the sample leaf-side of that return
///    address are the job's (``AsyncCallChain/jobFrames``).
/// 2. Otherwise (an optimized build whose partial functions keep no frame), the task's
///    `ResumeContext`: the context the job started in. The chain then begins with the function
///    the job started by calling (`ResumeTask`), and async functions called since without
///    suspending may be missing between the stack and it (``AsyncCallChain/fromJobStart``).
///
/// From there each context's `ResumeParent` is recorded and its `Parent` followed, up to the
/// task's root (`Parent` 0, whose `ResumeParent` is the runtime's completion function) or
/// ``maxDepth``. Every resume function must lie in an executable mapping. The task word is read
/// again at the end: a chain whose job changed meanwhile is discarded. Used on the watchdog only.
final class AsyncCallChainReader {
    let layout: AsyncTaskLayout
    /// glibc's thread layout, to find the thread pointer of a thread nobody armed.
    let threads: PoolLayout?
    private var code = ExecutableRanges()
    private var stacks: [UInt: SnapshotUnwinder.StackBounds] = [:]
    private var pointers: [Int32: UInt] = [:]

    /// Most callers recorded per chain.
    static let maxDepth = 64
    /// How much of the top of a thread's stack is searched for the running async frame.
    static let stackScanBytes = 64 * 1024

    init(layout: AsyncTaskLayout, threads: PoolLayout? = nil) {
        self.layout = layout
        self.threads = threads
    }

    /// The thread pointer of a glibc thread `tid` found in the memory maps (once per thread,
    /// then checked at each use: the control block points to itself and holds the thread's id).
    func threadPointer(of tid: Int32) -> UInt? {
        guard let threads else { return nil }
        if let known = pointers[tid], holds(tid, at: known, threads) { return known }
        guard let found = PoolWorkerScan.threadPointers(of: [tid], layout: threads)[tid] else { return nil }
        if pointers.count > 256 { pointers.removeAll() }
        pointers[tid] = found
        return found
    }

    private func holds(_ tid: Int32, at pointer: UInt, _ threads: PoolLayout) -> Bool {
        guard word(pointer) == pointer, let idWord = word(pointer &+ UInt(threads.tidOffset)) else { return false }
        return Int32(truncatingIfNeeded: idWord) == tid
    }

    /// The chain of the task the thread with thread pointer `threadPointer` runs; `physical` is
    /// the sample's stack (leaf first), `stack` the thread's stack bounds when known.
    func read(threadPointer: UInt, stack: SnapshotUnwinder.StackBounds?, physical: [UInt], now: UInt64) -> AsyncChainOutcome {
        guard let task = word(threadPointer &+ UInt(bitPattern: layout.activeTaskOffset)) else {
            return .omitted(AsyncChainOmission("the thread's active-task word could not be read"))
        }
        if task == 0 { return .notInTask }
        guard let header = word(task), header == layout.taskMetadata else {
            return .omitted(AsyncChainOmission("the running task's header is not an AsyncTask's"))
        }
        guard let resumeTask = word(task &+ UInt(layout.resumeTaskOffset)),
              let resumeContext = word(task &+ UInt(layout.resumeContextOffset)), resumeContext != 0 else {
            return .omitted(AsyncChainOmission("the running task's resume context could not be read"))
        }
        let running = stack.map { runningFrame(in: $0, physical: physical, resumeContext: resumeContext) }
            ?? bounds(around: threadPointer).flatMap { runningFrame(in: $0, physical: physical, resumeContext: resumeContext) }
        var callers: [UInt] = []
        if running == nil {
            guard code.contains(resumeTask, now: now) else {
                return .omitted(AsyncChainOmission("the running job's start function is not code"))
            }
            callers.append(resumeTask)
        }
        var context = running?.context ?? resumeContext
        var complete = false
        while callers.count < Self.maxDepth {
            guard let parent = word(context &+ UInt(layout.parentOffset)),
                  let resumeParent = word(context &+ UInt(layout.resumeParentOffset)) else {
                return .omitted(AsyncChainOmission("an async context could not be read"))
            }
            guard code.contains(resumeParent, now: now) else {
                return .omitted(AsyncChainOmission("an async context's resume function is not code"))
            }
            callers.append(resumeParent)
            if parent == 0 {
                complete = true
                break
            }
            context = parent
        }
        // The job must not have changed while the chain was read.
        guard word(threadPointer &+ UInt(bitPattern: layout.activeTaskOffset)) == task,
              word(task &+ UInt(layout.resumeContextOffset)) == resumeContext,
              running.map({ word($0.slot) == $0.context }) ?? true else {
            return .omitted(AsyncChainOmission("the task moved on while its chain was read"))
        }
        return .chain(AsyncCallChain(callers: callers, jobFrames: running?.jobFrames, fromJobStart: running == nil, complete: complete))
    }

    /// The running async function's frame: the highest word of the stack's top that is a saved
    /// frame pointer (pointing higher up the stack) followed by a return address of the sample,
    /// with a context below it whose parents lead to the job's `resumeContext`.
    private func runningFrame(in bounds: SnapshotUnwinder.StackBounds, physical: [UInt], resumeContext: UInt)
        -> (context: UInt, slot: UInt, jobFrames: Int)? {
        guard bounds.high > bounds.low, physical.count > 1 else { return nil }
        let size = Int(min(UInt(Self.stackScanBytes), bounds.high - bounds.low)) & ~7
        let base = bounds.high - UInt(size)
        var words = [UInt](repeating: 0, count: size / 8)
        let read = words.withUnsafeMutableBytes { CStallMonitor_read_memory(base, $0.baseAddress, size) }
        guard read == 0 else { return nil }
        var returnIndex: [UInt: Int] = [:]
        for index in physical.indices.dropFirst() where returnIndex[physical[index]] == nil { returnIndex[physical[index]] = index }
        var index = words.count - 2
        while index >= 1 {
            defer { index -= 1 }
            let address = base &+ UInt(index * 8)
            let savedFP = words[index]
            guard savedFP > address, savedFP < bounds.high, let frame = returnIndex[words[index + 1]] else { continue }
            let context = words[index - 1]
            guard context != 0, context & 7 == 0, leadsTo(resumeContext, from: context) else { continue }
            return (context, address &- 8, frame)
        }
        return nil
    }

    /// Whether following parents from `context` reaches `target` (itself included).
    private func leadsTo(_ target: UInt, from context: UInt) -> Bool {
        var current = context
        for _ in 0...Self.maxDepth {
            if current == target { return true }
            guard current != 0, let parent = word(current &+ UInt(layout.parentOffset)) else { return false }
            current = parent
        }
        return false
    }

    /// The mapping that holds a glibc thread's control block and, below it, its stack (cached).
    private func bounds(around threadPointer: UInt) -> SnapshotUnwinder.StackBounds? {
        if let cached = stacks[threadPointer] { return cached }
        var low: UInt = 0
        var high: UInt = 0
        guard CStallMonitor_mapping_containing(threadPointer, &low, &high) == 0 else { return nil }
        if stacks.count > 256 { stacks.removeAll() }
        let found = SnapshotUnwinder.StackBounds(low: low, high: high)
        stacks[threadPointer] = found
        return found
    }

    private func word(_ address: UInt) -> UInt? {
        var value: UInt = 0
        return CStallMonitor_read_memory(address, &value, 8) == 0 ? value : nil
    }
}

/// What reading a sampled thread's async callers found.
enum AsyncChainOutcome: Equatable {
    /// The thread runs no task.
    case notInTask
    case chain(AsyncCallChain)
    /// It runs a task whose chain could not be read safely.
    case omitted(AsyncChainOmission)
}

/// The async callers of one sample.
struct AsyncCallChain: Equatable {
    /// Code addresses of the resume functions, innermost caller first (when ``fromJobStart``, the
    /// first is the function the job started in).
    var callers: [UInt]
    /// How many of the sample's frames, from the leaf, ran in the current job (the rest are the
    /// runtime and the executor that ran it); nil when not known.
    var jobFrames: Int?
    /// Read from the task's resume context: callers entered in this job may be missing.
    var fromJobStart: Bool
    /// The walk reached the task's root (not cut at ``AsyncCallChainReader/maxDepth``).
    var complete: Bool
}
