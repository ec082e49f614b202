import CStallMonitor
import Glibc

/// A POSIX semaphore the watchdog sleeps on, with deadlines on the monotonic clock.
final class WakeupSignal: @unchecked Sendable {
    private let semaphore: UnsafeMutablePointer<sem_t>

    init() {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Wakes the sleeper (async-signal-safe, no allocation).
    func signal() {
        sem_post(semaphore)
    }

    /// Sleeps until signalled or until the monotonic clock reaches `deadline` (nil: no deadline).
    /// Returns true when signalled.
    @discardableResult
    func wait(until deadline: UInt64?) -> Bool {
        CStallMonitor_sem_wait_until(semaphore, deadline ?? 0) == 0
    }
}
