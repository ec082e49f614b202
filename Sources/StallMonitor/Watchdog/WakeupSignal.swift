import CStallMonitor
import Glibc

/// What the watchdog sleeps on, with deadlines on the monotonic clock.
///
/// It is one of the C shim's wake-up slots when one is free (an eventfd, a timerfd for late posts
/// and one for the wait's deadline, kept open for the life of the process, so the concurrency
/// pool's enqueue hook can post it at any time): then ``slot`` names it, and the pool probe can
/// ask to be woken by work reaching the pool. Otherwise (64 monitors alive at once, or no eventfd to be had) it is a POSIX
/// semaphore of its own and ``slot`` is nil.
final class WakeupSignal: @unchecked Sendable {
    /// The semaphore when there is no slot.
    private let semaphore: UnsafeMutablePointer<sem_t>?
    /// The C shim's wake-up slot this signal is, if any.
    let slot: Int32?

    init() {
        let taken = CStallMonitor_wakeup_slot_acquire()
        if taken >= 0 {
            slot = taken
            semaphore = nil
        } else {
            slot = nil
            let own = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
            sem_init(own, 0, 0)
            semaphore = own
        }
    }

    deinit {
        if let slot { CStallMonitor_wakeup_slot_release(slot) }
        if let semaphore {
            sem_destroy(semaphore)
            semaphore.deallocate()
        }
    }

    /// Wakes the sleeper (async-signal-safe, no allocation).
    func signal() {
        if let slot {
            CStallMonitor_wakeup_slot_post(slot)
        } else if let semaphore {
            sem_post(semaphore)
        }
    }

    /// Sleeps until signalled or until the monotonic clock reaches `deadline` (nil: no deadline).
    /// Returns true when signalled.
    @discardableResult
    func wait(until deadline: UInt64?) -> Bool {
        if let slot { return CStallMonitor_wakeup_slot_wait_until(slot, deadline ?? 0) == 0 }
        guard let semaphore else { return false }
        return CStallMonitor_sem_wait_until(semaphore, deadline ?? 0) == 0
    }
}
