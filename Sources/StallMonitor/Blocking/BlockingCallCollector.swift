import CStallMonitor
import Dispatch

/// The process's one collector of blocking-call records: installs the wrappers, keeps the C
/// recorder's threshold at the lowest of the running detectors', and moves the records it takes
/// to the detectors they belong to (a scoped detector gets its scope's, an unscoped one all).
/// While any detector runs, a thread of its own takes the records every 50 ms, so the recorder's
/// 256 slots stay free for calls that come in bursts; each detector keeps at most
/// ``pendingLimit`` records not taken yet (more are counted as dropped).
final class BlockingCallCollector: Sendable {
    /// What `install` found: the calls no loaded image's GOT leads to the wrapper of.
    struct Installation: Sendable {
        var unseen: [String]
        var unseenInExecutable: [String]
    }

    private struct Subscriber {
        var scope: UInt64
        var threshold: UInt64
        var pending: [CStallMonitorBlockingRecord] = []
        var dropped: UInt64 = 0
    }

    private struct State {
        var subscribers: [UInt64: Subscriber] = [:]
        var nextID: UInt64 = 1
        /// Whether the drain thread runs (it exits when the last detector stops).
        var draining = false
    }

    /// Records a detector keeps for its next take at most.
    static let pendingLimit = 4096

    private let state = Locked(State())
    private let drainWake = DispatchSemaphore(value: 0)

    /// Where the runtime keeps the task a thread runs, learned once (the pool probe's layout),
    /// and how a task's async context chain is laid out (verified against the runtime, as for
    /// stall reports); without the first the recorder calls `swift_task_getCurrent`, without the
    /// second records carry no async callers.
    private static let learnTaskWord: Void = {
        if case .success(let layout) = PoolLayout.learn() {
            CStallMonitor_blocking_set_task_word(layout.activeTaskOffset)
            if case .success(let tasks) = AsyncTaskLayout.verify(activeTaskOffset: layout.activeTaskOffset) {
                CStallMonitor_blocking_set_async_layout(
                    tasks.taskMetadata, Int32(tasks.resumeTaskOffset), Int32(tasks.resumeContextOffset))
            }
        }
    }()

    /// Where libdispatch keeps the main queue's drain owner, learned once (the MainActor probe's
    /// layout); without it a task on the main thread is taken for MainActor work.
    private static let learnMainQueue: Void = {
        if case .success(let queue) = MainQueueState.locate() {
            CStallMonitor_blocking_set_main_queue_state(queue.address + MainQueueState.stateOffset)
        }
    }()

    /// Starts a subscriber (installing the wrappers in every image loaded now); returns its id.
    func subscribe(
        thresholdNanoseconds: UInt64, scoped: Bool
    ) throws(BlockingCallDetector.StartError) -> (id: UInt64, installation: Installation) {
        _ = BlockingCallScope.installHook
        _ = Self.learnTaskWord
        _ = Self.learnMainQueue
        let subscribed: Result<(UInt64, Installation), BlockingCallDetector.StartError> = state.withLock { state in
            var seen = [Int32](repeating: 0, count: Int(CStallMonitorBlockingCallCount.rawValue))
            var inExecutable = seen
            let installed = CStallMonitor_blocking_install(&seen, &inExecutable)
            if installed == -2 { return .failure(.threadSanitizer) }
            guard installed >= 0 else { return .failure(.unresolvedFunctions) }
            let names = (0..<seen.count).map { String(cString: CStallMonitor_blocking_call_name(Int32($0))) }
            let installation = Installation(
                unseen: names.indices.filter { seen[$0] == 0 }.map { names[$0] },
                unseenInExecutable: names.indices.filter { inExecutable[$0] == 0 }.map { names[$0] })
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = Subscriber(scope: scoped ? id : 0, threshold: thresholdNanoseconds)
            enable(state)
            if !state.draining {
                state.draining = true
                NativeThread.start(name: "stall-blocking", stackSize: 256 << 10) { [self] in drainWhileSubscribed() }
            }
            return .success((id, installation))
        }
        return try subscribed.get()
    }

    /// Ends a subscriber; the recorder stops timing when it was the last.
    func unsubscribe(_ id: UInt64) {
        state.withLock { state in
            distribute(&state)
            state.subscribers[id] = nil
            enable(state)
        }
    }

    /// Sets the C recorder for the subscribers there are: the lowest threshold, calls outside
    /// any scope only when an unscoped subscriber takes them; off when there is none.
    private func enable(_ state: State) {
        guard let lowest = state.subscribers.values.map(\.threshold).min() else {
            CStallMonitor_blocking_disable()
            return
        }
        CStallMonitor_blocking_enable(lowest, state.subscribers.values.contains { $0.scope == 0 } ? 1 : 0)
    }

    /// The records of `id` taken since its last call, oldest first, and how many calls the
    /// recorder dropped meanwhile (every slot full).
    func take(_ id: UInt64) -> (records: [CStallMonitorBlockingRecord], dropped: UInt64) {
        state.withLock { state in
            distribute(&state)
            guard var subscriber = state.subscribers[id] else { return ([], 0) }
            let taken = (subscriber.pending, subscriber.dropped)
            subscriber.pending = []
            subscriber.dropped = 0
            state.subscribers[id] = subscriber
            return taken
        }
    }

    /// How long the stack copies' unwinder stays open unused while no monitor holds it (a monitor
    /// releases it after its own ``StallMonitor/Configuration/releaseCachesAfter``).
    static let unwinderQuietPeriod: UInt64 = 30_000_000_000

    /// The drain thread: takes records every 50 ms until no detector is left. Where no monitor
    /// holds the unwinder its stack copies opened, closes it after a quiet period and when the
    /// last detector stops.
    private func drainWhileSubscribed() {
        var passes = 0
        while true {
            _ = drainWake.wait(timeout: .now() + .milliseconds(50))
            let done = state.withLock { state -> Bool in
                distribute(&state)
                if state.subscribers.isEmpty { state.draining = false }
                return !state.draining
            }
            passes += 1
            let now = CStallMonitor_monotonic_ns()
            if done || (passes % 20 == 0 && now > Self.unwinderQuietPeriod) {
                let cutoff = done ? UInt64.max : now - Self.unwinderQuietPeriod
                if MonitorProcess.shared.unwinder.releaseUnlessRetained(unusedSince: cutoff) {
                    _ = CStallMonitor_trim_heap()
                }
            }
            if done { return }
        }
    }

    /// Replaces the frames of a record whose frame-pointer walk stopped short with those the CFI
    /// unwinder finds in its stack copy, where it finds more, and gives the copy back.
    private static func unwindStackCopy(_ record: inout CStallMonitorBlockingRecord) {
        defer {
            withUnsafePointer(to: record) { CStallMonitor_blocking_release_stack_copy($0) }
            record.stack_copy = 0
        }
        let capacity = Int(CSTALLMONITOR_BLOCKING_FRAMES)
        guard
            case .stack(let frames, let complete) = MonitorProcess.shared.unwinder.unwindStackCopy(
                of: record, maxFrames: capacity),
            frames.first == record.frames.0, frames.count > Int(record.frame_count)
        else { return }
        withUnsafeMutableBytes(of: &record.frames) { bytes in
            let words = bytes.bindMemory(to: UInt.self)
            for (index, frame) in frames.prefix(capacity).enumerated() { words[index] = frame }
        }
        record.frame_count = UInt32(min(frames.count, capacity))
        record.frames_complete = complete ? 1 : 0
    }

    /// Takes every record from the C recorder and hands each to the subscribers it belongs to.
    private func distribute(_ state: inout State) {
        let capacity = 64
        var buffer = [CStallMonitorBlockingRecord](repeating: CStallMonitorBlockingRecord(), count: capacity)
        while true {
            var dropped: UInt64 = 0
            let count = Int(CStallMonitor_blocking_take(&buffer, Int32(capacity), &dropped))
            for index in 0..<count where buffer[index].stack_copy != 0 {
                Self.unwindStackCopy(&buffer[index])
            }
            for id in state.subscribers.keys {
                state.subscribers[id]!.dropped += dropped
                let subscriber = state.subscribers[id]!
                for record in buffer.prefix(count)
                where record.duration_ns >= subscriber.threshold
                    && (subscriber.scope == 0 || record.scope == subscriber.scope)
                {
                    if state.subscribers[id]!.pending.count < Self.pendingLimit {
                        state.subscribers[id]!.pending.append(record)
                    } else {
                        state.subscribers[id]!.dropped += 1
                    }
                }
            }
            if count < capacity { return }
        }
    }
}
