import Synchronization

/// The files (or other items) a ``WorkerPool``'s workers take one by one from a shared counter,
/// so a slow file does not hold up the others.
final class WorkQueue<Item: Sendable>: Sendable {
    /// The items, in the order they are handed out.
    let items: [Item]
    private let taken = Atomic<Int>(0)

    init(_ items: [Item]) {
        self.items = items
    }

    /// The index of the next item not yet taken, or nil when all are.
    func nextIndex() -> Int? {
        let index = taken.wrappingAdd(1, ordering: .relaxed).oldValue
        return index < items.count ? index : nil
    }

    /// The next item not yet taken, or nil when all are.
    func next() -> Item? {
        nextIndex().map { items[$0] }
    }
}
