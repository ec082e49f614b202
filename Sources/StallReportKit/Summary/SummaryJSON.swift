import Foundation

/// The JSON document `stallreport summarize --format json` prints. Keys are stable: new keys may
/// be added, existing ones keep their name and meaning while `formatVersion` is 1. Optional keys
/// are left out when there is no value. Dates are ISO 8601 UTC; durations are milliseconds.
/// See `Reports/stallreport-summary.schema.json`.
package struct SummaryJSON: Codable, Sendable, Equatable {
    /// Version of this document's layout: 1.
    package var formatVersion = 1
    /// Always `summary`.
    package var kind = "summary"
    /// The filters applied.
    package var filters: FiltersJSON
    /// Overall numbers.
    package var totals: Summary.Totals
    /// The longest stall, when there is one.
    package var worst: StallJSON?
    /// Duration distribution over fixed buckets (all buckets, empty ones included).
    package var histogram: [DurationHistogram.Bucket]
    /// Fingerprints shown, largest total stall time first.
    package var fingerprints: [FingerprintJSON]
    /// Fingerprints left out by `--top`.
    package var omittedFingerprints: Int
    /// Files that could not be used.
    package var problems: [ReportProblem]
    /// `scene` when grouped by scene (`--group-by scene`); absent for the default grouping by fingerprint.
    package var groupBy: SummaryGrouping?
    /// With `--group-by scene`: the scenes shown, largest total stall time first (``fingerprints`` is then empty).
    package var scenes: [SceneJSON]?
    /// With `--group-by loop`: the loops shown, largest total stall time first.
    package var loops: [LoopJSON]?
    /// With `--group-by loop`: loops left out by `--top`.
    package var omittedLoops: Int?
    /// With `--group-by scene`: scenes left out by `--top`.
    package var omittedScenes: Int?
    /// Session records and stall rates; absent when no session record was found.
    package var sessions: SessionsJSON?
    /// Blocking calls by call site (`blocking-*.json` reports); absent when none was found.
    package var blockingCalls: BlockingCallsSummary?

    /// The filters of a summary.
    package struct FiltersJSON: Codable, Sendable, Equatable {
        /// Lower bound on `startedAt`, inclusive.
        package var since: Date?
        /// Upper bound on `startedAt`, exclusive.
        package var until: Date?
        /// Shortest duration included.
        package var minDurationMs: Double?
    }

    /// One stall.
    package struct StallJSON: Codable, Sendable, Equatable {
        /// Its fingerprint.
        package var fingerprint: String
        /// Its duration.
        package var durationMs: Double
        /// When it started.
        package var startedAt: Date
        /// `ended`, `inProgress` or `fatal`.
        package var status: StallStatus
        /// `cpu`, `blocked`, `mixed` or `congestion`.
        package var classification: StallClassification
        /// Path of its report file.
        package var report: String

        /// Creates the JSON form of a record.
        package init(_ record: StallRecord) {
            fingerprint = record.fingerprint
            durationMs = record.durationMs
            startedAt = record.startedAt
            status = record.status
            classification = record.classification
            report = record.path
        }
    }

    /// The numbers of one group of stalls, the same for a fingerprint and a scene. Encoded inline:
    /// its keys stand in the group's object next to ``FingerprintJSON/fingerprint`` or the scene's keys.
    package struct GroupJSON: Codable, Sendable, Equatable {
        /// Number of stalls.
        package var count: Int
        /// Sum of durations.
        package var totalMs: Double
        /// Nearest-rank median.
        package var p50Ms: Double
        /// Nearest-rank 95th percentile.
        package var p95Ms: Double
        /// Nearest-rank 99th percentile.
        package var p99Ms: Double
        /// Longest.
        package var maxMs: Double
        /// Earliest start.
        package var firstSeen: Date
        /// Latest start.
        package var lastSeen: Date
        /// Count per classification, every known classification present (0 when none), plus any
        /// value a newer monitor wrote.
        package var classifications: [String: Int]
        /// Count per status, every known status present (0 when none), plus any value a newer
        /// monitor wrote.
        package var statuses: [String: Int]
        /// Top frames of the longest stall's representative stack (app frames when there are any), leaf first.
        package var stack: [StackFrameSummary]
        /// Syscall seen in a sample without a stack, when there is one.
        package var syscall: String?
        /// The app's async callers of the longest stall's representative stack, innermost first;
        /// absent when it ran in no task (or older reports).
        package var asyncCallers: [StackFrameSummary]?
        /// Path of the longest stall's report.
        package var exampleReport: String
        /// Stalls of the group per monitored hour; only with session records.
        package var stallsPerHour: Double?
        /// Stall time of the group per monitored hour, in milliseconds; only with session records.
        package var stallMsPerHour: Double?

        /// Creates the JSON form of a group's numbers, with its rates when known.
        package init(_ stats: FingerprintStats, rates: StallRates? = nil) {
            count = stats.count
            totalMs = stats.totalMs
            p50Ms = stats.p50Ms
            p95Ms = stats.p95Ms
            p99Ms = stats.p99Ms
            maxMs = stats.maxMs
            firstSeen = stats.firstSeen
            lastSeen = stats.lastSeen
            classifications = Self.countsByName(stats.classifications)
            statuses = Self.countsByName(stats.statuses)
            stack = stats.worst.stack
            syscall = stats.worst.syscall
            asyncCallers = stats.worst.asyncCallers.isEmpty ? nil : stats.worst.asyncCallers
            exampleReport = stats.worst.path
            stallsPerHour = rates?.stallsPerHour
            stallMsPerHour = rates?.stallMsPerHour
        }

        /// `counted` by the names reports write: every known value present (0 when none), plus any
        /// value a newer monitor wrote.
        private static func countsByName<Value: OpenReportValue>(_ counted: [Value: Int]) -> [String: Int] {
            Dictionary(uniqueKeysWithValues: Value.known.map { ($0.rawValue, 0) })
                .merging(counted.map { ($0.key.rawValue, $0.value) }, uniquingKeysWith: { _, counted in counted })
        }
    }

    /// One fingerprint: its ``GroupJSON`` numbers (read as `fingerprintJSON.count` …) and the fingerprint.
    package struct FingerprintJSON: GroupNumbersJSON, Codable, Sendable, Equatable {
        /// The fingerprint.
        package var fingerprint: String
        /// The group's numbers, encoded inline.
        package var numbers: GroupJSON

        /// Creates the JSON form of a group, with its rates when known.
        package init(_ stats: FingerprintStats, rates: StallRates? = nil) {
            fingerprint = stats.fingerprint
            numbers = GroupJSON(stats, rates: rates)
        }

        private enum CodingKeys: String, CodingKey {
            case fingerprint
        }

        /// Decodes the fingerprint and the numbers from the same object.
        package init(from decoder: any Decoder) throws {
            fingerprint = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .fingerprint)
            numbers = try GroupJSON(from: decoder)
        }

        /// Encodes the fingerprint and the numbers into one object.
        package func encode(to encoder: any Encoder) throws {
            try numbers.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(fingerprint, forKey: .fingerprint)
        }
    }

    /// Creates the JSON form of a summary.
    package init(_ summary: Summary) {
        filters = FiltersJSON(
            since: summary.filter.since, until: summary.filter.until, minDurationMs: summary.filter.minDurationMs)
        totals = summary.totals
        worst = summary.worst.map(StallJSON.init)
        histogram = summary.histogram.buckets
        problems = summary.problems
        // The groups go under the key of the grouping; `fingerprints` is always there (empty
        // unless grouped by fingerprint) and `groupBy` only when the grouping is not the default.
        fingerprints = []
        omittedFingerprints = 0
        if summary.grouping != .fingerprint { groupBy = summary.grouping }
        switch summary.grouping {
        case .fingerprint:
            fingerprints = summary.groups.map { FingerprintJSON($0, rates: summary.rates(of: $0)) }
            omittedFingerprints = summary.omittedGroups
        case .scene:
            scenes = summary.groups.map { SceneJSON($0, rates: summary.rates(of: $0)) }
            omittedScenes = summary.omittedGroups
        case .loop:
            loops = summary.groups.map { LoopJSON($0, rates: summary.rates(of: $0)) }
            omittedLoops = summary.omittedGroups
        }
        sessions = summary.sessions.map {
            SessionsJSON($0, rates: summary.rates, stallsWithoutSession: summary.stallsWithoutSession)
        }
        blockingCalls = summary.blockingCalls
    }

    /// Pretty-printed JSON with sorted keys and a trailing newline.
    package func encoded() throws -> Data {
        var data = try ReportCoding.makeEncoder(pretty: true).encode(self)
        data.append(0x0a)
        return data
    }
}

/// A group's object in the summary JSON: its own keys next to the shared ``SummaryJSON/GroupJSON``
/// numbers, which read as its own properties (`group.p95Ms`).
@dynamicMemberLookup
package protocol GroupNumbersJSON {
    /// The group's numbers, encoded inline.
    var numbers: SummaryJSON.GroupJSON { get set }
}

extension GroupNumbersJSON {
    /// The group's numbers, as if they were properties of this type.
    package subscript<Value>(dynamicMember keyPath: WritableKeyPath<SummaryJSON.GroupJSON, Value>) -> Value {
        get { numbers[keyPath: keyPath] }
        set { numbers[keyPath: keyPath] = newValue }
    }
}
