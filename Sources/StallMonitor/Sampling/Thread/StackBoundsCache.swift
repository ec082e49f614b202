import CStallMonitor

/// The stacks of threads a watch samples that never armed themselves (a Dispatch worker): the
/// mapping that holds the thread's stack pointer, looked up once per thread.
struct StackBoundsCache {
    /// Mappings found so far, by kernel thread id.
    private var mapped: [Int32: SnapshotUnwinder.StackBounds] = [:]

    /// Forgets thread `tid`'s stack (its id may be a new thread's).
    mutating func forget(_ tid: Int32) {
        mapped[tid] = nil
    }

    /// The stack bounds of thread `tid`: `known` (it armed itself) when they hold its stack
    /// pointer `sp`, otherwise the mapping that holds `sp`, cached per thread.
    mutating func bounds(
        of tid: Int32, sp: UInt?, known: SnapshotUnwinder.StackBounds?
    ) -> SnapshotUnwinder.StackBounds? {
        // Bounds that do not hold the known stack pointer are another thread's (a reused id).
        func holds(_ bounds: SnapshotUnwinder.StackBounds) -> Bool {
            sp.map { bounds.low <= $0 && $0 < bounds.high } ?? true
        }
        if let known, holds(known) { return known }
        if let cached = mapped[tid], holds(cached) { return cached }
        guard let sp else { return nil }
        var low: UInt = 0
        var high: UInt = 0
        guard CStallMonitor_mapping_containing(sp, &low, &high) == 0 else { return nil }
        if mapped.count > 64 { mapped.removeAll() }
        mapped[tid] = .init(low: low, high: high)
        return mapped[tid]
    }
}
