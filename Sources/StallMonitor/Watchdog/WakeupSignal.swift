import CStallMonitor
import Glibc

/// A POSIX semaphore the watchdog sleeps on, with deadlines on the monotonic clock.
///
/// It is one of the C shim's wake-up slots when one is free (static storage that outlives the
/// signal, so the concurrency pool's enqueue hook can post it at any time): then ``slot`` names
/// it, and the pool probe can ask to be woken by work reaching the pool. Otherwise (64 monitors
/// alive at once) it is a semaphore of its own and ``slot`` is nil.
final class WakeupSignal: @unchecked Sendable {
    private let semaphore: UnsafeMutablePointer<sem_t>
    /// The C shim's wake-up slot this signal is, if any.
    let slot: Int32?

    init() {
        let taken = CStallMonitor_wakeup_slot_acquire()
        if taken >= 0 {
            slot = taken
            semaphore = CStallMonitor_wakeup_slot_semaphore(taken)
        } else {
            slot = nil
            semaphore = .allocate(capacity: 1)
            sem_init(semaphore, 0, 0)
        }
    }

    deinit {
        if let slot {
            CStallMonitor_wakeup_slot_release(slot)
        } else {
            sem_destroy(semaphore)
            semaphore.deallocate()
        }
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
