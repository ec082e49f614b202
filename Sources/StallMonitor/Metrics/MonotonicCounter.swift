import CoreMetrics
import Synchronization

/// A swift-metrics counter that follows a running total kept elsewhere (one of the monitor's
/// atomic counts): each ``sync(to:)`` adds what the total gained since the last one. Callable
/// from any thread; a total is never added twice (compare-and-exchange on what was emitted).
final class MonotonicCounter: Sendable {
    private let counter: Counter
    private let emitted = Atomic<Int>(0)

    init(_ counter: Counter) {
        self.counter = counter
    }

    /// Adds the difference between `total` and the total emitted so far, when it grew.
    func sync(to total: Int) {
        var previous = emitted.load(ordering: .relaxed)
        while total > previous {
            let (exchanged, original) = emitted.compareExchange(
                expected: previous, desired: total, ordering: .relaxed)
            if exchanged {
                counter.increment(by: total - previous)
                return
            }
            previous = original
        }
    }
}
