import CStallMonitor
import Dispatch

/// The process's one collector of blocking-call records: installs the wrappers, keeps the C
/// recorder's threshold at the lowest of the running detectors', and moves the records it takes
/// to the detectors they belong to (a scoped detector gets its scope's, an unscoped one all).
/// While any detector runs, a thread of its own (`stall-blocking`) takes the records: it sleeps
/// until the recorder makes one, then takes them every 50 ms while they keep coming, so the
/// recorder's 256 slots stay free for calls that come in bursts, and an idle process never wakes
/// it (but for a look every ``unwinderQuietPeriod``). Each detector keeps at most
/// ``pendingLimit`` records not taken yet (more are counted as dropped), and is told when it has
/// new ones (`onRecords`).
final class BlockingCallCollector: Sendable {
    /// What `install` found: the calls no loaded image's GOT leads to the wrapper of.
    struct Installation: Sendable {
        var unseen: [String]
        var unseenInExecutable: [String]
    }

    private struct Subscriber {
        var scope: UInt64
        var threshold: UInt64
        /// Called (by the collector's thread, outside its lock) when records or drops were added.
        var onRecords: (@Sendable () -> Void)?
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
        thresholdNanoseconds: UInt64, scoped: Bool, onRecords: (@Sendable () -> Void)? = nil
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
            state.subscribers[id] = Subscriber(
                scope: scoped ? id : 0, threshold: thresholdNanoseconds, onRecords: onRecords)
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
        let notify = state.withLock { state in
            let notify = distribute(&state, quiet: id).notify
            state.subscribers[id] = nil
            enable(state)
            return notify
        }
        notify.forEach { $0() }
        CStallMonitor_blocking_collector_wake()
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
        typealias Taken = (records: [CStallMonitorBlockingRecord], dropped: UInt64)
        let (taken, notify) = state.withLock { state -> (Taken, [@Sendable () -> Void]) in
            let notify = distribute(&state, quiet: id).notify
            guard var subscriber = state.subscribers[id] else { return (([], 0), notify) }
            let taken: Taken = (subscriber.pending, subscriber.dropped)
            subscriber.pending = []
            subscriber.dropped = 0
            state.subscribers[id] = subscriber
            return (taken, notify)
        }
        notify.forEach { $0() }
        return taken
    }

    /// How long the stack copies' unwinder stays open unused while no monitor holds it (a monitor
    /// releases it after its own ``StallMonitor/Configuration/releaseCachesAfter``).
    static let unwinderQuietPeriod: UInt64 = 30_000_000_000

    /// How often the drain thread takes records while they keep coming.
    static let drainInterval: UInt64 = 50_000_000

    /// The drain thread: sleeps until a record is made, then takes records every
    /// ``drainInterval`` until a take finds none, until no detector is left. Where no monitor
    /// holds the unwinder its stack copies opened, closes it once unused for the quiet period
    /// (the sleep ends at least that often) and when the last detector stops.
    private func drainWhileSubscribed() {
        var recordsCame = false
        var lastReleaseCheck: UInt64 = 0
        while true {
            if recordsCame {
                _ = CStallMonitor_blocking_collector_wait(Self.drainInterval)
            } else if CStallMonitor_blocking_collector_park() == 0 {
                _ = CStallMonitor_blocking_collector_wait(Self.unwinderQuietPeriod)
            }
            let (done, taken) = state.withLock { state in
                let taken = distribute(&state, quiet: nil)
                if state.subscribers.isEmpty { state.draining = false }
                return (!state.draining, taken)
            }
            taken.notify.forEach { $0() }
            recordsCame = taken.tookAny
            let now = CStallMonitor_monotonic_ns()
            if done || (now &- lastReleaseCheck >= 1_000_000_000 && now > Self.unwinderQuietPeriod) {
                lastReleaseCheck = now
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
    /// Returns whether it took any record or drop, and the `onRecords` of the subscribers that got
    /// some, but `quiet`'s (the subscriber taking its records now), to call outside the lock.
    private func distribute(
        _ state: inout State, quiet: UInt64?
    ) -> (tookAny: Bool, notify: [@Sendable () -> Void]) {
        let capacity = 64
        var buffer = [CStallMonitorBlockingRecord](repeating: CStallMonitorBlockingRecord(), count: capacity)
        var tookAny = false
        var gotSome = Set<UInt64>()
        while true {
            var dropped: UInt64 = 0
            let count = Int(CStallMonitor_blocking_take(&buffer, Int32(capacity), &dropped))
            tookAny = tookAny || count > 0 || dropped > 0
            for index in 0..<count where buffer[index].stack_copy != 0 {
                Self.unwindStackCopy(&buffer[index])
            }
            for id in state.subscribers.keys {
                state.subscribers[id]!.dropped += dropped
                if dropped > 0 { gotSome.insert(id) }
                let subscriber = state.subscribers[id]!
                for record in buffer.prefix(count)
                where record.duration_ns >= subscriber.threshold
                    && (subscriber.scope == 0 || record.scope == subscriber.scope)
                {
                    gotSome.insert(id)
                    if state.subscribers[id]!.pending.count < Self.pendingLimit {
                        state.subscribers[id]!.pending.append(record)
                    } else {
                        state.subscribers[id]!.dropped += 1
                    }
                }
            }
            if count < capacity { break }
        }
        let notify = gotSome.subtracting(quiet.map { [$0] } ?? []).compactMap { state.subscribers[$0]?.onRecords }
        return (tookAny, notify)
    }
}
