import Foundation

/// Reports read from a set of paths, folded per fingerprint, plus every problem met on the way.
public struct ReportCollection: Sendable {
    /// One accumulator per fingerprint, for the reports that passed the filter.
    public var groups: [String: FingerprintAccumulator]
    /// Problems, sorted by path.
    public var problems: [ReportProblem]
    /// Candidate files found.
    public var filesFound: Int
    /// Files decoded as valid reports (before filtering).
    public var reportsRead: Int
    /// Valid reports that the filter left out.
    public var reportsFilteredOut: Int

    /// Creates a collection from its parts.
    public init(groups: [String: FingerprintAccumulator] = [:], problems: [ReportProblem] = [], filesFound: Int = 0, reportsRead: Int = 0, reportsFilteredOut: Int = 0) {
        self.groups = groups
        self.problems = problems
        self.filesFound = filesFound
        self.reportsRead = reportsRead
        self.reportsFilteredOut = reportsFilteredOut
    }

    /// Reports that passed the filter.
    public var reportsMatched: Int { reportsRead - reportsFilteredOut }

    /// Finished statistics of every group, sorted by total stall time (then count, then fingerprint).
    public func stats() -> [FingerprintStats] {
        groups.values.map { $0.stats() }.sorted(by: FingerprintStats.byImpact)
    }

    /// Folds a record in, if the filter accepts it.
    public mutating func add(_ record: StallRecord, filter: RecordFilter) {
        reportsRead += 1
        guard filter.accepts(record) else {
            reportsFilteredOut += 1
            return
        }
        groups[record.fingerprint, default: FingerprintAccumulator(fingerprint: record.fingerprint)].add(record)
    }

    /// Merges another collection (e.g. one worker's share) into this one.
    public mutating func merge(_ other: ReportCollection) {
        for (key, accumulator) in other.groups {
            groups[key, default: FingerprintAccumulator(fingerprint: key)].merge(accumulator)
        }
        problems += other.problems
        filesFound += other.filesFound
        reportsRead += other.reportsRead
        reportsFilteredOut += other.reportsFilteredOut
    }
}

extension FingerprintStats {
    /// Order of impact: total stall time descending, then count descending, then fingerprint.
    public static func byImpact(_ a: FingerprintStats, _ b: FingerprintStats) -> Bool {
        if a.totalMs != b.totalMs { return a.totalMs > b.totalMs }
        if a.count != b.count { return a.count > b.count }
        return a.fingerprint < b.fingerprint
    }
}
