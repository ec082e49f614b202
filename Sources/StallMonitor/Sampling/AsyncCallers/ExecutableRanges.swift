import CStallMonitor

/// The process's executable mappings, read once and again (at most once a second) when an
/// address is not in them: every resume function of an async chain must lie in one.
struct ExecutableRanges {
    private var ranges: [(start: UInt, end: UInt)] = []
    private var readAt: UInt64?

    /// Whether `address` lies in an executable mapping at `now`.
    mutating func contains(_ address: UInt, now: UInt64) -> Bool {
        if readAt == nil { refresh(now: now) }
        if find(address) { return true }
        guard let readAt, now &- readAt >= 1_000_000_000 else { return false }
        refresh(now: now)
        return find(address)
    }

    private func find(_ address: UInt) -> Bool {
        var low = 0
        var high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].end <= address { low = middle + 1 } else { high = middle }
        }
        return low < ranges.count && ranges[low].start <= address
    }

    private mutating func refresh(now: UInt64) {
        readAt = now
        let capacity = 4096
        var starts = [UInt](repeating: 0, count: capacity)
        var ends = [UInt](repeating: 0, count: capacity)
        let count = CStallMonitor_executable_ranges(&starts, &ends, Int32(capacity))
        ranges = count > 0 ? (0..<Int(count)).map { (starts[$0], ends[$0]) }.sorted { $0.start < $1.start } : []
    }
}
