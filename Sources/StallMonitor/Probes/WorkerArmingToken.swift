import CStallMonitor
import Synchronization

/// The no-op token a probe of Dispatch workers (the main queue's, the concurrency pool's) queues
/// on the work it watches: when a token last ran, and the arming of each worker a token runs on
/// for the first time (its stack bounds and the sampling signal unblocked, once per worker).
final class WorkerArmingToken: Sendable {
    /// Whether the probe has let go of its monitor (tokens still queued then arm nothing).
    private let detached = Atomic<Bool>(false)
    /// When a token last ran (monotonic ns).
    private let ranAt = Atomic<UInt64>(0)
    /// Marks the workers a token of this probe already armed (a thread-local mark, so a new
    /// worker that reuses a retired one's thread id is armed again).
    private let visitor: UInt64
    /// Hands out a fresh ``visitor`` to every token source.
    private static let visitors = Atomic<UInt64>(0)
    /// Arms the calling worker (set by the probe's attach before any token is queued).
    private let armWorker = Locked<(@Sendable () -> Void)?>(nil)

    /// A token source whose workers are all still to be armed.
    init() {
        visitor = Self.visitors.add(1, ordering: .relaxed).newValue
    }

    /// Sets how a token arms a worker it meets first.
    func arm(with arm: @escaping @Sendable () -> Void) {
        armWorker.withLock { $0 = arm }
    }

    /// Lets the monitor go: the arming closure holds the monitored thread, which holds the probe.
    /// Returns false when the probe was already detached.
    @discardableResult
    func detach() -> Bool {
        guard !detached.exchange(true, ordering: .sequentiallyConsistent) else { return false }
        armWorker.withLock { $0 = nil }
        return true
    }

    /// Whether ``detach()`` has been called.
    var isDetached: Bool { detached.load(ordering: .relaxed) }

    /// When a token last ran (monotonic ns; 0: none has).
    var lastRan: UInt64 { ranAt.load(ordering: .acquiring) }

    /// Runs on a worker as the token: notes the time, arms a worker not seen before.
    func ran() {
        ranAt.store(CStallMonitor_monotonic_ns(), ordering: .releasing)
        guard !isDetached else { return }
        if CStallMonitor_thread_first_visit(visitor) != 0, let arm = armWorker.withLock({ $0 }) { arm() }
    }
}
