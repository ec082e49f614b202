import CStallMonitor
import Synchronization

/// A watched loop's thread marked as one that must not block, for as long as the loop is watched:
/// the probe registers the loop's thread from a callout on it, and releasing ends the mark on that
/// thread from any thread (the C recorder compares generations). A loop's own wait (`epoll_wait`
/// for NIO and CoreFoundation) is not a watched call, so only what its callouts do is timed.
final class BlockingLoopRegistration: Sendable {
    private let loop: Int32
    private let released = Atomic<Bool>(false)

    init() {
        loop = CStallMonitor_blocking_loop_acquire()
    }

    deinit {
        release()
    }

    /// Registers the calling thread (the loop's).
    func registerCallingThread() {
        guard loop >= 0, !released.load(ordering: .acquiring) else { return }
        _ = CStallMonitor_blocking_loop_here(loop)
    }

    /// Ends the registration on every thread (once).
    func release() {
        guard loop >= 0, !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        CStallMonitor_blocking_loop_release(loop)
    }
}
