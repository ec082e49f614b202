import CStallMonitor
import Foundation

/// Hands work to a queue (the writer's) at fixed intervals, driven by a small thread of
/// its own that sleeps on a semaphore. Not a dispatch timer: on Linux the first dispatch timer
/// starts libdispatch's timer thread, which then lives as long as the process, and after `stop()`
/// the monitor must leave no thread behind. One timer runs several jobs, each at its own
/// interval: a monitor has one timer thread (session heartbeat and cache release), not one per
/// job, so an idle monitor's memory holds one thread stack fewer.
final class RepeatingTimer: Sendable {
    private let wake = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)
    private let cancelled = Locked(false)

    /// Hands `work` to `enqueue` every `interval`, the first time one interval from now.
    convenience init(every interval: Duration, enqueue: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
                     _ work: @escaping @Sendable () -> Void) {
        self.init(enqueue: enqueue, intervals: [interval], jobs: [work])
    }

    /// Hands `jobs[i]` to `enqueue` every `intervals[i]`, each the first time one of its
    /// intervals from now (the two arrays have the same length).
    init(enqueue: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void, intervals: [Duration],
         jobs: [@Sendable () -> Void]) {
        precondition(intervals.count == jobs.count && !jobs.isEmpty, "one interval per job")
        // At least a millisecond: a zero interval must not spin.
        let periods = intervals.map { max(UInt64(clamping: $0.nanoseconds), 1_000_000) }
        let wake = self.wake, exited = self.exited, cancelled = self.cancelled
        NativeThread.start(name: "StallMonitor.heartbeat", stackSize: 64 * 1024) {
            _ = CStallMonitor_set_thread_name("stall-heartbeat")
            let start = DispatchTime.now().uptimeNanoseconds
            var due = periods.map { start.addingReportingOverflow($0).overflow ? UInt64.max : start + $0 }
            while true {
                let now = DispatchTime.now().uptimeNanoseconds
                let next = due.min() ?? UInt64.max
                let wait = next > now ? next - now : 0
                guard wake.wait(timeout: .now() + .nanoseconds(Int(clamping: wait))) == .timedOut,
                      !cancelled.withLock({ $0 }) else { break }
                let woke = DispatchTime.now().uptimeNanoseconds
                for index in due.indices where due[index] <= woke {
                    enqueue(jobs[index])
                    // The next run one interval after this one (one after now, when late).
                    let following = due[index].addingReportingOverflow(periods[index])
                    let fromNow = woke.addingReportingOverflow(periods[index])
                    if following.overflow || fromNow.overflow {
                        due[index] = UInt64.max
                    } else {
                        due[index] = following.partialValue > woke ? following.partialValue : fromNow.partialValue
                    }
                }
            }
            exited.signal()
        }
    }

    /// Stops the timer and waits for its thread to end (at once); a run already handed over
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
