import Foundation

/// Reports read from a set of paths, folded per group (fingerprint or scene), plus the session
/// records found next to them and every problem met on the way.
public struct ReportCollection: Sendable {
    /// One accumulator per group, for the reports that passed the filter.
    package var groups: [String: FingerprintAccumulator]
    /// Problems, sorted by path.
    public var problems: [ReportProblem]
    /// Candidate files found.
    public var filesFound: Int
    /// Files decoded as valid reports (before filtering).
    public var reportsRead: Int
    /// Valid reports that the filter left out.
    public var reportsFilteredOut: Int
    /// How records are grouped.
    package var grouping: SummaryGrouping
    /// Session record files found (`*.session`).
    package var sessionFilesFound: Int
    /// Session records read, summed (time window applied).
    package var sessions: SessionTotals
    /// Reports that passed the filter and are compact, rate-limited ones (counted like the others).
    package var rateLimitedReports: Int
    /// Reports that passed the filter but come from a process without a session record; only
    /// counted when session records were read.
    package var stallsWithoutSession: Int
    /// Blocking-calls reports (`blocking-*.json`) folded by call site.
    package var blockingCalls = BlockingCallSites()

    /// Creates a collection from its parts.
    package init(
        groups: [String: FingerprintAccumulator] = [:], problems: [ReportProblem] = [], filesFound: Int = 0,
        reportsRead: Int = 0,
        reportsFilteredOut: Int = 0, grouping: SummaryGrouping = .fingerprint
    ) {
        self.groups = groups
        self.problems = problems
        self.filesFound = filesFound
        self.reportsRead = reportsRead
        self.reportsFilteredOut = reportsFilteredOut
        self.grouping = grouping
        self.sessionFilesFound = 0
        self.sessions = SessionTotals()
        self.rateLimitedReports = 0
        self.stallsWithoutSession = 0
    }

    /// Reports that passed the filter.
    package var reportsMatched: Int { reportsRead - reportsFilteredOut }

    /// True when at least one session record was read (inside the time window or not).
    package var hasSessions: Bool { sessions.sessions + sessions.filteredOut > 0 }

    /// Finished statistics of every group, sorted by total stall time (then count, then key).
    public func stats() -> [FingerprintStats] {
        groups.values.map { $0.stats() }.sorted(by: FingerprintStats.byImpact)
    }

    /// Folds a record in, if the filter accepts it. With a `sessionIndex`, a record of a process
    /// without a session record is also counted in ``stallsWithoutSession``.
    package mutating func add(_ record: StallRecord, filter: RecordFilter, sessionIndex: SessionIndex? = nil) {
        reportsRead += 1
        guard filter.accepts(record) else {
            reportsFilteredOut += 1
            return
        }
        if record.rateLimited { rateLimitedReports += 1 }
        if let sessionIndex, !sessionIndex.isEmpty, !sessionIndex.covers(record) { stallsWithoutSession += 1 }
        let key = grouping.key(of: record)
        groups[key, default: FingerprintAccumulator(fingerprint: key, grouping: grouping)].add(record)
    }

    /// Merges another collection (e.g. one worker's share) into this one.
    package mutating func merge(_ other: ReportCollection) {
        for (key, accumulator) in other.groups {
            groups[key, default: FingerprintAccumulator(fingerprint: key, grouping: accumulator.grouping)].merge(
                accumulator)
        }
        problems += other.problems
        filesFound += other.filesFound
        reportsRead += other.reportsRead
        reportsFilteredOut += other.reportsFilteredOut
        sessionFilesFound += other.sessionFilesFound
        sessions.merge(other.sessions)
        rateLimitedReports += other.rateLimitedReports
        stallsWithoutSession += other.stallsWithoutSession
        blockingCalls.merge(other.blockingCalls)
    }
}

extension FingerprintStats {
    /// Order of impact: total stall time descending, then count descending, then fingerprint.
    package static func byImpact(_ a: FingerprintStats, _ b: FingerprintStats) -> Bool {
        if a.totalMs != b.totalMs { return a.totalMs > b.totalMs }
        if a.count != b.count { return a.count > b.count }
        return a.fingerprint < b.fingerprint
    }
}
