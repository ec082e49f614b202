import Foundation

/// Everything kept about one group of stalls (one fingerprint, or one scene with
/// ``SummaryGrouping/scene``) while reports are read: counts, durations (for percentiles), time
/// range, classification and status mix, and the worst stall's stack and path.
/// Accumulators fold one record at a time and merge with each other, so reading can be split
/// across threads; the result does not depend on the order records arrive in.
package struct FingerprintAccumulator: Sendable, Equatable {
    /// The group key: the fingerprint, or with ``SummaryGrouping/scene`` the scene (empty for none).
    package let fingerprint: String
    /// What the key is.
    package let grouping: SummaryGrouping
    /// Number of stalls.
    package private(set) var count = 0
    /// Sum of durations, in milliseconds.
    package private(set) var totalMs = 0.0
    /// Every duration, in milliseconds, in arrival order.
    package private(set) var durations: [Double] = []
    /// Earliest `startedAt`.
    package private(set) var firstSeen: Date = .distantFuture
    /// Latest `startedAt`.
    package private(set) var lastSeen: Date = .distantPast
    /// Stalls per classification.
    package private(set) var classifications: [StallClassification: Int] = [:]
    /// Stalls per status.
    package private(set) var statuses: [StallStatus: Int] = [:]
    /// The longest stall (ties broken by path), whose stack and path represent the group.
    package private(set) var worst: StallRecord?
    /// Distinct fingerprints in the group (one, when grouping by fingerprint).
    package private(set) var fingerprints: Set<String> = []

    /// Creates an empty accumulator for the group `fingerprint` (a scene with ``SummaryGrouping/scene``).
    package init(fingerprint: String, grouping: SummaryGrouping = .fingerprint) {
        self.fingerprint = fingerprint
        self.grouping = grouping
    }

    /// Folds in one record of this group.
    package mutating func add(_ record: StallRecord) {
        precondition(grouping.key(of: record) == fingerprint)
        count += 1
        fingerprints.insert(record.fingerprint)
        totalMs += record.durationMs
        durations.append(record.durationMs)
        firstSeen = min(firstSeen, record.startedAt)
        lastSeen = max(lastSeen, record.startedAt)
        classifications[record.classification, default: 0] += 1
        statuses[record.status, default: 0] += 1
        if let current = worst {
            if Self.isWorse(record, than: current) { worst = record }
        } else {
            worst = record
        }
    }

    /// Folds in another accumulator of the same group.
    package mutating func merge(_ other: FingerprintAccumulator) {
        precondition(other.fingerprint == fingerprint && other.grouping == grouping)
        guard other.count > 0 else { return }
        count += other.count
        fingerprints.formUnion(other.fingerprints)
        totalMs += other.totalMs
        durations += other.durations
        firstSeen = min(firstSeen, other.firstSeen)
        lastSeen = max(lastSeen, other.lastSeen)
        classifications.merge(other.classifications, uniquingKeysWith: +)
        statuses.merge(other.statuses, uniquingKeysWith: +)
        if let theirs = other.worst {
            if let mine = worst {
                if Self.isWorse(theirs, than: mine) { worst = theirs }
            } else {
                worst = theirs
            }
        }
    }

    private static func isWorse(_ a: StallRecord, than b: StallRecord) -> Bool {
        if a.durationMs != b.durationMs { return a.durationMs > b.durationMs }
        return a.path < b.path
    }

    /// The finished statistics of this fingerprint.
    package func stats() -> FingerprintStats {
        FingerprintStats(self)
    }
}

/// Finished statistics of one fingerprint (or scene), as summaries, baselines, gates and diffs use them.
public struct FingerprintStats: Sendable, Equatable {
    /// The fingerprint, or with ``SummaryGrouping/scene`` the scene (empty for none).
    public var fingerprint: String
    /// What ``fingerprint`` is.
    package var grouping: SummaryGrouping
    /// Distinct fingerprints in the group.
    package var distinctFingerprints: Int
    /// Number of stalls.
    public var count: Int
    /// Sum of durations, in milliseconds.
    public var totalMs: Double
    /// Durations in ascending order, in milliseconds.
    package var sortedDurations: [Double]
    /// Nearest-rank median duration.
    public var p50Ms: Double
    /// Nearest-rank 95th percentile duration.
    public var p95Ms: Double
    /// Nearest-rank 99th percentile duration.
    public var p99Ms: Double
    /// Longest duration.
    public var maxMs: Double
    /// Earliest start.
    public var firstSeen: Date
    /// Latest start.
    public var lastSeen: Date
    /// Stalls per classification.
    public var classifications: [StallClassification: Int]
    /// Stalls per status.
    public var statuses: [StallStatus: Int]
    /// The longest stall of the group.
    public var worst: StallRecord

    /// Finishes an accumulator; it must hold at least one record.
    package init(_ accumulator: FingerprintAccumulator) {
        precondition(accumulator.count > 0, "stats of an empty accumulator")
        let sorted = accumulator.durations.sorted()
        fingerprint = accumulator.fingerprint
        grouping = accumulator.grouping
        distinctFingerprints = accumulator.fingerprints.count
        count = accumulator.count
        totalMs = accumulator.totalMs
        sortedDurations = sorted
        p50Ms = Percentile.nearestRank(50, sorted: sorted)!
        p95Ms = Percentile.nearestRank(95, sorted: sorted)!
        p99Ms = Percentile.nearestRank(99, sorted: sorted)!
        maxMs = sorted.last!
        firstSeen = accumulator.firstSeen
        lastSeen = accumulator.lastSeen
        classifications = accumulator.classifications
        statuses = accumulator.statuses
        worst = accumulator.worst!
    }

    /// The group key as shown: the fingerprint, the scene, or `(no scene)`.
    package var label: String { grouping.label(forKey: fingerprint) }

    /// Fatal stalls in the group.
    package var fatalCount: Int { statuses[.fatal] ?? 0 }

    /// The top frame's name, or the syscall, or a placeholder: a one-line label for the group.
    package var headline: String {
        if let frame = worst.stack.first { return frame.symbol }
        if let syscall = worst.syscall { return "in syscall \(syscall) (no stack)" }
        return "no stack"
    }

    /// The classifications seen, known ones in declaration order, then values written by a newer
    /// monitor in name order.
    private var classificationsInOrder: [StallClassification] {
        StallClassification.known + classifications.keys.filter { !$0.isKnown }.sorted { $0.rawValue < $1.rawValue }
    }

    /// The classification with most stalls (ties in declaration order, then by name).
    var dominantClassification: StallClassification {
        classificationsInOrder.max { (classifications[$0] ?? 0) < (classifications[$1] ?? 0) } ?? .mixed
    }

    /// Classification mix such as `cpu 3, blocked 1`, most frequent first.
    package var classificationMix: String {
        classificationsInOrder
            .compactMap { kind in classifications[kind].map { (kind, $0) } }
            .sorted { $0.1 > $1.1 }
            .map { "\($0.0.rawValue) \($0.1)" }
            .joined(separator: ", ")
    }
}
