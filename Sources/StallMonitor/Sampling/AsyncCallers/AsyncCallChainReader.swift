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
    private var missing: [Int32: UInt64] = [:]

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
    /// A thread not found there (the main thread, a thread on a stack of its own) is looked for
    /// again only after ``lookAgainAfter``: the maps are not read at every sample.
    func threadPointer(of tid: Int32, now: UInt64) -> UInt? {
        guard let threads else { return nil }
        if let known = pointers[tid], holds(tid, at: known, threads) { return known }
        if let missed = missing[tid], now &- missed < Self.lookAgainAfter { return nil }
        guard let found = PoolWorkerScan.threadPointers(of: [tid], layout: threads)[tid] else {
            if missing.count > 256 { missing.removeAll() }
            missing[tid] = now
            return nil
        }
        if pointers.count > 256 { pointers.removeAll() }
        pointers[tid] = found
        missing[tid] = nil
        return found
    }

    /// How long a thread whose thread pointer was not found is not looked for again.
    static let lookAgainAfter: UInt64 = 5_000_000_000

    private func holds(_ tid: Int32, at pointer: UInt, _ threads: PoolLayout) -> Bool {
        guard word(pointer) == pointer, let idWord = word(pointer &+ UInt(threads.tidOffset)) else { return false }
        return Int32(truncatingIfNeeded: idWord) == tid
    }

    /// The chain of the task the thread with thread pointer `threadPointer` runs; `physical` is
    /// the sample's stack (leaf first), `stack` the thread's stack bounds when known.
    func read(
        threadPointer: UInt, stack: SnapshotUnwinder.StackBounds?, physical: [UInt], now: UInt64
    ) -> AsyncChainOutcome {
        guard let task = word(threadPointer &+ UInt(bitPattern: layout.activeTaskOffset)) else {
            return .omitted(AsyncChainOmission("the thread's active-task word could not be read"))
        }
        if task == 0 { return .notInTask }
        // The task's first words in one read: its metadata, ResumeTask and ResumeContext.
        var header = [UInt](repeating: 0, count: layout.resumeContextOffset / 8 + 1)
        guard header.withUnsafeMutableBytes({ CStallMonitor_read_memory(task, $0.baseAddress, $0.count) }) == 0,
            header[0] == layout.taskMetadata
        else {
            return .omitted(AsyncChainOmission("the running task's header is not an AsyncTask's"))
        }
        let resumeTask = header[layout.resumeTaskOffset / 8]
        let resumeContext = header[layout.resumeContextOffset / 8]
        guard resumeContext != 0 else {
            return .omitted(AsyncChainOmission("the running task has no resume context"))
        }
        let running = (stack ?? bounds(around: threadPointer)).flatMap {
            runningFrame(in: $0, physical: physical, resumeContext: resumeContext)
        }
        var callers: [UInt] = []
        let walk: Walk
        // Callers entered in this job: read from the running frame, those up to the context the
        // job started in; from the job start, the function it started in.
        let jobCallers: Int
        if let running {
            walk = running.walk
            jobCallers = running.walk.contexts.firstIndex(of: resumeContext) ?? 0
        } else {
            jobCallers = 1
            guard code.contains(resumeTask, now: now) else {
                return .omitted(AsyncChainOmission("the running job's start function is not code"))
            }
            callers.append(resumeTask)
            walk = self.walk(from: resumeContext)
        }
        if walk.unreadable { return .omitted(AsyncChainOmission("an async context could not be read")) }
        for resumeParent in walk.resumeParents where callers.count < Self.maxDepth {
            guard code.contains(resumeParent, now: now) else {
                return .omitted(AsyncChainOmission("an async context's resume function is not code"))
            }
            callers.append(resumeParent)
        }
        // The job must not have changed while the chain was read.
        guard word(threadPointer &+ UInt(bitPattern: layout.activeTaskOffset)) == task,
            word(task &+ UInt(layout.resumeContextOffset)) == resumeContext,
            running.map({ word($0.slot) == $0.context }) ?? true
        else {
            return .omitted(AsyncChainOmission("the task moved on while its chain was read"))
        }
        return .chain(
            AsyncCallChain(
                callers: callers, jobFrames: running?.jobFrames, fromJobStart: running == nil, jobCallers: jobCallers,
                complete: walk.complete && callers.count == (running == nil ? 1 : 0) + walk.resumeParents.count))
    }

    /// A walk up a context chain.
    struct Walk {
        var contexts: [UInt] = []
        var resumeParents: [UInt] = []
        /// Reached a context whose parent is 0 (the task's root).
        var complete = false
        /// A context could not be read.
        var unreadable = false
    }

    /// Follows parents from `context`, at most ``maxDepth`` contexts. A task's contexts come from
    /// its own slab allocator, mostly a few dozen bytes apart: each page they lie in is read once
    /// (one `process_vm_readv`), and a context that straddles a page's end with a read of its own.
    private func walk(from context: UInt) -> Walk {
        var walk = Walk()
        var current = context
        var page = (start: UInt(0), words: [UInt](repeating: 0, count: Self.pageSize / 8))
        var pageValid = false
        let pairOffset = UInt(layout.parentOffset)
        func pair(at address: UInt) -> (parent: UInt, resumeParent: UInt)? {
            let start = address & ~UInt(Self.pageSize - 1)
            if address &+ 16 <= start &+ UInt(Self.pageSize) {
                if !pageValid || page.start != start {
                    pageValid =
                        page.words.withUnsafeMutableBytes {
                            CStallMonitor_read_memory(start, $0.baseAddress, Self.pageSize)
                        } == 0
                    page.start = start
                }
                if pageValid {
                    let index = Int((address - start) / 8)
                    return (page.words[index], page.words[index + 1])
                }
            }
            var two: (UInt, UInt) = (0, 0)
            return CStallMonitor_read_memory(address, &two, 16) == 0 ? two : nil
        }
        while walk.contexts.count < Self.maxDepth {
            guard current != 0, current & 7 == 0, let found = pair(at: current &+ pairOffset) else {
                walk.unreadable = true
                return walk
            }
            walk.contexts.append(current)
            walk.resumeParents.append(found.resumeParent)
            if found.parent == 0 {
                walk.complete = true
                return walk
            }
            current = found.parent
        }
        return walk
    }

    /// The unit in which context memory is read.
    static let pageSize = 4096

    /// How much of the stack is read at a time, from the top down, while looking for the frame.
    static let stackScanChunk = 8 * 1024

    /// The running async function's frame: the highest word of the stack's top that is a saved
    /// frame pointer (pointing higher up the stack) followed by a return address of the sample,
    /// with a context below it whose parents lead to the job's `resumeContext` (that walk is
    /// kept: it is the chain).
    private func runningFrame(
        in bounds: SnapshotUnwinder.StackBounds, physical: [UInt], resumeContext: UInt
    )
        -> (context: UInt, slot: UInt, jobFrames: Int, walk: Walk)?
    {
        guard bounds.high > bounds.low, physical.count > 1 else { return nil }
        let limit = min(UInt(Self.stackScanBytes), bounds.high - bounds.low) & ~7
        let returns = physical.dropFirst()
        var words = [UInt](repeating: 0, count: Self.stackScanChunk / 8 + 2)
        var scanned: UInt = 0
        while scanned < limit {
            // Each chunk overlaps the previous one by two words (a frame record straddling them).
            let size = Int(min(UInt(Self.stackScanChunk), limit - scanned))
            let base = bounds.high - scanned - UInt(size)
            let extra = scanned == 0 ? 0 : 16
            let read = words.withUnsafeMutableBytes { CStallMonitor_read_memory(base, $0.baseAddress, size + extra) }
            guard read == 0 else { return nil }
            var index = (size + extra) / 8 - 2
            while index >= 1 {
                defer { index -= 1 }
                let address = base &+ UInt(index * 8)
                let savedFP = words[index]
                guard savedFP > address, savedFP < bounds.high, let frame = returns.firstIndex(of: words[index + 1])
                else { continue }
                let context = words[index - 1]
                guard context != 0, context & 7 == 0 else { continue }
                let walk = walk(from: context)
                guard walk.contexts.contains(resumeContext) else { continue }
                return (context, address &- 8, frame, walk)
            }
            scanned += UInt(size)
        }
        return nil
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
    /// How many of ``callers``, from the innermost, were entered in the current job (the function
    /// the job started in included).
    var jobCallers: Int
    /// The walk reached the task's root (not cut at ``AsyncCallChainReader/maxDepth``).
    var complete: Bool
}
