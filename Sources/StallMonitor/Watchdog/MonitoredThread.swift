import CStallMonitor
import Glibc
import StallReportModel
import Synchronization

/// A thread whose loop the watchdog watches: its span tracker (fed by the loop's probe), its
/// kernel thread id (known once the thread has armed itself) and the loop's kind.
final class MonitoredThread: @unchecked Sendable {
    /// Facts about the thread copied into reports.
    struct Identity: Sendable {
        var tid: Int32
        var name: String
        var isMainThread: Bool
        var loopKind: String
        /// What went wrong when the thread armed itself (see ``MonitoredThread/arm(signal:sampleTimeout:maxFrames:report:)``).
        var armingProblems: [String] = []
    }

    let tracker: SpanTracker
    /// The probe that feeds ``tracker``.
    let probe: any LoopProbe
    /// 0 until the thread has armed itself (tid known, signal stack ensured, unwinder warmed up).
    let armedTID = Atomic<Int32>(0)
    /// The loop kind reports name (the probe's ``LoopProbe/kind``).
    var loopKind: LoopKind { LoopKind(rawValue: probe.kind) }
    /// The thread's stack, `[low, high)`, read on the thread when it arms (published before
    /// ``armedTID``); 0 when unknown. Snapshots never copy past `high`.
    private let stackLow = Atomic<UInt>(0)
    private let stackHigh = Atomic<UInt>(0)
    /// Written by ``arm(signal:sampleTimeout:maxFrames:report:)`` before ``armedTID`` is published.
    private let problems = Locked<[String]>([])
    /// Threads that run spans of a loop whose thread changes from span to span (Dispatch
    /// workers draining the main queue), armed by ``armWorker(signal:report:)``: stack bounds
    /// and arming problems by kernel thread id.
    /// Shared by the slots of one pool (``ConcurrencyPoolProbe``), whose workers any slot may meet.
    let workers: Locked<[Int32: ArmedWorker]>

    /// What ``armWorker(signal:report:)`` learned about one worker thread. (A struct, not a
    /// labelled tuple: the runtime builds a tuple's metadata with its C++ demangler, whose
    /// libstdc++ pages a host that never demangles would otherwise add to its RSS at start.)
    struct ArmedWorker {
        var bounds: SnapshotUnwinder.StackBounds?
        var problems: [String]
        /// The worker's thread pointer (0: unknown), for reading its running task.
        var threadPointer: UInt = 0
    }

    /// The armed thread's thread pointer (0 until armed, or unknown).
    private let armedThreadPointer = Atomic<UInt>(0)

    /// The thread pointer of thread `tid`: the armed thread's, an armed worker's, or the probe's.
    func threadPointer(of tid: Int32) -> UInt? {
        if let worker = workers.withLock({ $0[tid] }), worker.threadPointer != 0 { return worker.threadPointer }
        if tid == armedTID.load(ordering: .acquiring) {
            let pointer = armedThreadPointer.load(ordering: .acquiring)
            if pointer != 0 { return pointer }
        }
        return probe.threadPointer(of: tid)
    }

    /// What went wrong when the thread armed itself; complete once ``armedTID`` is set.
    var armingProblems: [String] { problems.withLock { $0 } }

    /// The thread's stack bounds, once armed and when known.
    var stackBounds: SnapshotUnwinder.StackBounds? {
        let high = stackHigh.load(ordering: .acquiring)
        guard high != 0 else { return nil }
        return .init(low: stackLow.load(ordering: .acquiring), high: high)
    }

    /// The stack bounds of thread `tid`: the armed thread's, or a worker's armed by
    /// ``armWorker(signal:report:)``; nil when unknown.
    func stackBounds(of tid: Int32) -> SnapshotUnwinder.StackBounds? {
        if let worker = workers.withLock({ $0[tid] }) { return worker.bounds }
        return tid == armedTID.load(ordering: .acquiring) ? stackBounds : nil
    }

    /// What went wrong when thread `tid` armed itself (the armed thread or a worker).
    func armingProblems(of tid: Int32) -> [String] {
        if let worker = workers.withLock({ $0[tid] }) { return worker.problems }
        return tid == armedTID.load(ordering: .acquiring) ? armingProblems : []
    }

    init(tracker: SpanTracker, probe: any LoopProbe, workers: Locked<[Int32: ArmedWorker]> = Locked([:])) {
        self.tracker = tracker
        self.probe = probe
        self.workers = workers
    }

    /// Whether the loop has been seen running since the monitor started.
    var hasRun: Bool {
        probe.hasRun(tracker: tracker, armed: armedTID.load(ordering: .acquiring) != 0)
    }

    /// Runs on the monitored thread: records its id, unblocks the sampling signal (threads
    /// inherit signal masks: a process spawned from a libdispatch worker starts with every signal
    /// blocked), notes its stack bounds, makes sure it has a large enough alternate signal stack, and takes one sample of
    /// itself so that libunwind's first-use allocations (per-thread caches) happen here and not
    /// inside a later signal handler. A thread that blocks the signal later is still detected:
    /// its samples say so. A step that fails is said through `report` and kept for the reports
    /// (``armingProblems``); the thread is watched anyway.
    func arm(
        signal: Int32, sampleTimeout: UInt64, maxFrames: Int, report: (String) -> Void,
        steps: ArmingSteps = ArmingSteps()
    ) {
        let tid = CStallMonitor_gettid()
        var low: UInt = 0
        var high: UInt = 0
        if CStallMonitor_current_stack_bounds(&low, &high) == 0 {
            stackLow.store(low, ordering: .releasing)
            stackHigh.store(high, ordering: .releasing)
        }
        var found: [String] = []
        let unblocked = steps.unblockSignal(signal)
        if unblocked < 0 { found.append("cannot unblock signal \(signal): \(CString.errorMessage(-unblocked))") }
        let altstack = steps.ensureAltstack(64 * 1024)
        if altstack < 0 {
            found.append(
                "no alternate signal stack of 64 KiB (\(CString.errorMessage(-altstack))): a deep stack may overflow in the handler"
            )
        }
        var buffer = [UInt](repeating: 0, count: maxFrames)
        switch steps.warmUp(tid, sampleTimeout, maxFrames, &buffer) {
        case .stack, .unavailable: break  // unavailable: no libunwind, which the reports already say
        case .timedOut: found.append("the warm-up sample timed out (the signal did not arrive)")
        case .busy: found.append("the warm-up sample found the sampler busy")
        case .sendFailed: found.append("the warm-up sample: \(ThreadSampler.sendFailedNote)")
        case .handlerReplaced:
            found.append("the sampling signal \(signal) no longer runs the monitor's handler (the host took it over)")
        }
        problems.withLock { $0 = found }
        for problem in found { report("thread \(tid): \(problem)") }
        armedThreadPointer.store(CStallMonitor_thread_pointer(), ordering: .releasing)
        armedTID.store(tid, ordering: .releasing)
    }

    /// Runs on a worker thread that has just run the loop's work (a Dispatch worker draining the
    /// main queue), once per worker: notes its stack bounds and unblocks the sampling signal
    /// (libdispatch workers block every asynchronous signal) so that a later stall on it can be
    /// sampled while it runs. No alternate signal stack (the handler then runs on the worker's
    /// own, large stack) and no warm-up sample: this runs inside the loop's work. The first
    /// worker armed also marks the loop armed (``armedTID``).
    func armWorker(signal: Int32, report: (String) -> Void) {
        let tid = CStallMonitor_gettid()
        var low: UInt = 0
        var high: UInt = 0
        let bounds: SnapshotUnwinder.StackBounds? =
            CStallMonitor_current_stack_bounds(&low, &high) == 0 ? .init(low: low, high: high) : nil
        var found: [String] = []
        let unblocked = CStallMonitor_unblock_signal(signal)
        if unblocked < 0 { found.append("cannot unblock signal \(signal): \(CString.errorMessage(-unblocked))") }
        workers.withLock {
            $0[tid] = ArmedWorker(bounds: bounds, problems: found, threadPointer: CStallMonitor_thread_pointer())
        }
        for problem in found { report("thread \(tid): \(problem)") }
        _ = armedTID.compareExchange(expected: 0, desired: tid, ordering: .acquiringAndReleasing)
    }

    /// The steps of arming, replaceable in tests to make one fail.
    struct ArmingSteps {
        /// Unblocks the signal on the calling thread; a negative errno on failure.
        var unblockSignal: (Int32) -> Int32 = { CStallMonitor_unblock_signal($0) }
        /// Makes sure the calling thread has an alternate signal stack of at least that size;
        /// a negative errno on failure.
        var ensureAltstack: (Int) -> Int32 = { CStallMonitor_ensure_altstack($0) }
        /// Takes the warm-up sample of the calling thread.
        var warmUp: (Int32, UInt64, Int, inout [UInt]) -> StackSampler.Outcome = { tid, timeout, frames, buffer in
            StackSampler.sample(tid: tid, timeout: timeout, maxFrames: frames, into: &buffer)
        }
    }
}
