import CStallMonitor
import Foundation

/// Runs work on a dispatch queue (the writer's) at a fixed interval, driven by a small thread of
/// its own that sleeps on a semaphore. Not a dispatch timer: on Linux the first dispatch timer
/// starts libdispatch's timer thread, which then lives as long as the process, and after `stop()`
/// the monitor must leave no thread behind.
final class RepeatingTimer: Sendable {
    private let wake = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)
    private let cancelled = Locked(false)

    /// Runs `work` on `queue` every `interval`, the first time one interval from now.
    init(every interval: Duration, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        let nanos = Int(clamping: interval.nanoseconds)
        let wake = self.wake, exited = self.exited, cancelled = self.cancelled
        NativeThread.start(name: "StallMonitor.heartbeat", stackSize: 64 * 1024) {
            _ = CStallMonitor_set_thread_name("stall-heartbeat")
            while wake.wait(timeout: .now() + .nanoseconds(nanos)) == .timedOut {
                guard !cancelled.withLock({ $0 }) else { break }
                queue.async(execute: work)
            }
            exited.signal()
        }
    }

    /// Stops the timer and waits for its thread to end (at once); a run already queued
    /// finishes on its queue. Calling it again does nothing.
    func cancel() {
        let first = cancelled.withLock { cancelled in
            defer { cancelled = true }
            return !cancelled
        }
        guard first else { return }
        wake.signal()
        exited.wait()
    }
}
