/// The pending work of an ``IdleWorkQueue``, oldest first, with its counts. Kept behind the
/// queue's lock; every operation is O(1) except removing a cancelled entry (O(capacity)).
struct IdleWorkBacklog {
    struct Entry {
        let ticket: IdleWorkTicket
        let work: @Sendable () -> Void
    }

    private var entries: [Entry] = []
    private var head = 0
    private(set) var closed = false
    var nextSequence: UInt64 = 1
    var statistics = IdleWorkQueue.Statistics()

    var count: Int { entries.count - head }
    var isEmpty: Bool { count == 0 }

    /// Appends `entry`; when the backlog already holds `capacity` entries, removes and returns the
    /// oldest one still pending (its ticket moved to `dropped`).
    mutating func append(_ entry: Entry, capacity: Int) -> Entry? {
        var dropped: Entry?
        while count >= capacity, let oldest = popFirst() {
            if oldest.ticket.move(from: .pending, to: .dropped) {
                dropped = oldest
                statistics.dropped += 1
                break
            }
        }
        entries.append(entry)
        statistics.submitted += 1
        return dropped
    }

    /// Removes and returns the oldest entry, or `nil` when empty or closed.
    mutating func next() -> Entry? {
        closed ? nil : popFirst()
    }

    /// Removes the entry of `ticket` if it is still here (it was cancelled; the caller counts it).
    mutating func remove(_ ticket: IdleWorkTicket) {
        guard let index = entries[head...].firstIndex(where: { $0.ticket === ticket }) else { return }
        entries.remove(at: index)
    }

    /// Removes every entry, in order, and closes the backlog when `closing`.
    mutating func removeAll(closing: Bool) -> [Entry] {
        let all = Array(entries[head...])
        entries.removeAll(keepingCapacity: !closing)
        head = 0
        if closing { closed = true }
        return all
    }

    private mutating func popFirst() -> Entry? {
        guard head < entries.count else { return nil }
        let entry = entries[head]
        head += 1
        if head == entries.count {
            entries.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= entries.count {
            entries.removeFirst(head)
            head = 0
        }
        return entry
    }
}
