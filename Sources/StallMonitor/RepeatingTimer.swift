import Dispatch

/// A repeating timer on a dispatch queue (the writer's), cancelled from any thread.
final class RepeatingTimer: @unchecked Sendable {
    // A dispatch source is safe to cancel from any thread; nothing else is touched after init.
    private let source: DispatchSourceTimer

    /// Runs `work` on `queue` every `interval`, the first time one interval from now.
    init(every interval: Duration, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        source = DispatchSource.makeTimerSource(queue: queue)
        let nanos = Int(clamping: interval.nanoseconds)
        // A tenth of the interval as leeway lets the system batch the wake-up with others.
        source.schedule(deadline: .now() + .nanoseconds(nanos), repeating: .nanoseconds(nanos), leeway: .nanoseconds(nanos / 10))
        source.setEventHandler(handler: work)
        source.resume()
    }

    /// Stops the timer; a run already started finishes on its queue.
    func cancel() {
        source.cancel()
    }
}
