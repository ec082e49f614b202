import Foundation

/// The result of `stallreport summarize`: stalls grouped by fingerprint (or scene), worst first,
/// with overall totals, a duration histogram and, when session records were read, stall rates. Its
/// JSON form (`stallreport summarize --json`) is a stable interface.
public struct Summary: Sendable {
    /// Overall numbers; also the `totals` of `stallreport summarize --json`.
    public struct Totals: Codable, Sendable, Equatable {
        /// Candidate files found.
        package var filesFound: Int
        /// Valid reports read.
        package var reportsRead: Int
        /// Valid reports the filters left out.
        package var reportsFilteredOut: Int
        /// Stalls summarized (reports that passed the filters).
        public var stalls: Int
        /// Distinct fingerprints among them (whatever the grouping).
        public var fingerprints: Int
        /// Sum of their durations, in milliseconds.
        public var totalMs: Double
        /// Stalls whose status is `ended`.
        public var ended: Int
        /// Stalls whose status is `inProgress`.
        public var inProgress: Int
        /// Stalls whose status is `fatal` (the process died during the stall).
        public var fatal: Int
        /// Files that could not be used.
        package var problems: Int
        /// Stalls summarized that came from compact, rate-limited reports (counted like the
        /// others); nil when none.
        public var rateLimited: Int?

        private enum CodingKeys: String, CodingKey {
            case filesFound = "files"
            case reportsRead
            case reportsFilteredOut = "filteredOut"
            case stalls, fingerprints, totalMs, ended,
                inProgress, fatal, problems, rateLimited
        }
    }

    /// Overall numbers.
    public var totals: Totals
    /// The longest stall of all.
    public var worst: StallRecord?
    /// Distribution of all durations.
    public var histogram: DurationHistogram
    /// Groups shown, worst (largest total stall time) first.
    public var groups: [FingerprintStats]
    /// Groups left out by `--top`.
    public var omittedGroups: Int
    /// Number of groups, including those left out by `--top`.
    var groupCount: Int { groups.count + omittedGroups }
    /// The filters used.
    package var filter: RecordFilter
    /// Problems met while reading.
    package var problems: [ReportProblem]
    /// How the groups are formed.
    package var grouping: SummaryGrouping
    /// Session records summed up; nil when none was found (then there are no rates).
    public var sessions: SessionTotals?
    /// Stalls summarized whose process has no session record (only counted when there are sessions).
    package var stallsWithoutSession: Int
    /// Blocking calls by call site; nil when no blocking-calls report was found.
    package var blockingCalls: BlockingCallsSummary?

    /// Summarizes a collection, keeping the `top` groups with most total stall time (all when nil).
    public init(collection: ReportCollection, filter: RecordFilter = RecordFilter(), top: Int? = nil) {
        let all = collection.stats()
        var totals = Totals(
            filesFound: collection.filesFound, reportsRead: collection.reportsRead,
            reportsFilteredOut: collection.reportsFilteredOut, stalls: 0, fingerprints: all.count,
            totalMs: 0, ended: 0, inProgress: 0, fatal: 0, problems: collection.problems.count)
        var worst: StallRecord?
        for group in all {
            totals.stalls += group.count
            totals.totalMs += group.totalMs
            totals.ended += group.statuses[.ended] ?? 0
            totals.inProgress += group.statuses[.inProgress] ?? 0
            totals.fatal += group.statuses[.fatal] ?? 0
            if worst == nil || group.worst.durationMs > worst!.durationMs
                || (group.worst.durationMs == worst!.durationMs && group.worst.path < worst!.path)
            {
                worst = group.worst
            }
        }
        if collection.grouping != .fingerprint {
            totals.fingerprints =
                collection.groups.values.reduce(into: Set<String>()) { $0.formUnion($1.fingerprints) }.count
        }
        self.totals = totals
        self.worst = worst
        self.histogram = DurationHistogram(durations: all.lazy.flatMap(\.sortedDurations))
        let kept = top.map { max(0, $0) } ?? all.count
        self.groups = Array(all.prefix(kept))
        self.omittedGroups = all.count - self.groups.count
        self.filter = filter
        self.problems = collection.problems
        self.totals.rateLimited = collection.rateLimitedReports > 0 ? collection.rateLimitedReports : nil
        self.grouping = collection.grouping
        self.sessions = collection.hasSessions ? collection.sessions : nil
        self.stallsWithoutSession = collection.hasSessions ? collection.stallsWithoutSession : 0
        self.blockingCalls = BlockingCallsSummary(collection.blockingCalls, top: top)
    }

    /// Stall rates over monitored time; nil without session records or monitored time.
    public var rates: StallRates? {
        guard let sessions, sessions.monitoredMs > 0 else { return nil }
        return StallRates(
            stalls: totals.stalls, stallMs: totals.totalMs, fatal: totals.fatal, monitoredMs: sessions.monitoredMs)
    }

    /// Stall rates of one group over all monitored time; nil without monitored time.
    public func rates(of group: FingerprintStats) -> StallRates? {
        guard let sessions, sessions.monitoredMs > 0 else { return nil }
        return StallRates(
            stalls: group.count, stallMs: group.totalMs, fatal: group.fatalCount, monitoredMs: sessions.monitoredMs)
    }
}
