import Synchronization

/// One slot of a ``ConcurrencyPoolProbe``: the loop the monitor watches for one pool worker at a
/// time (each span carries its worker's thread). Slot 0 drives the whole pool's looks.
final class PoolSlotProbe: PolledLoopProbe, @unchecked Sendable {
    let kind = ConcurrencyPoolProbe.loopKind
    let index: Int
    let pool: ConcurrencyPoolProbe
    private let state: PoolSlotState
    var threadPerSpan: Bool { true }
    var runsTasks: Bool { true }

    func threadPointer(of tid: Int32) -> UInt? { pool.threadPointer(of: tid) }

    init(index: Int, pool: ConcurrencyPoolProbe, state: PoolSlotState) {
        self.index = index
        self.pool = pool
        self.state = state
    }

    var armedWorkers: Locked<[Int32: MonitoredThread.ArmedWorker]>? { pool.armedWorkers }

    func runsLoopWork(on tid: Int32, armedTID: Int32) -> Bool { state.assigned.load(ordering: .relaxed) == tid }

    var sharedLoop: (any SharedLoop)? { pool }

    func attach(to tracker: SpanTracker, arm: @escaping @Sendable () -> Void) {
        pool.attach(slot: index, tracker: tracker, arm: arm)
    }

    func detach() { pool.detach() }

    /// The pool is known to run (its layout was checked in a task on it when the monitor started).
    func hasRun(tracker: SpanTracker, armed: Bool) -> Bool { true }

    func poll(now: UInt64) -> UInt64? { index == 0 ? pool.poll(now: now) : nil }

    func prepareToSleep(on wakeup: WakeupSignal) -> Bool { index == 0 ? pool.prepareToSleep(on: wakeup) : true }

    func wokeUp(at now: UInt64) {
        if index == 0 { pool.wokeUp(at: now) }
    }

    func finishPolling() {
        if index == 0 { pool.finishPolling() }
    }
}

/// What a slot and its pool share: the worker the slot watches now (0: none).
final class PoolSlotState: Sendable {
    let assigned = Atomic<Int32>(0)
}
