import Foundation

extension SummaryJSON {
    /// Session records summed up and the stall rates they give (`sessions` in the summary JSON).
    /// Rates count the stalls summarized (after `--min-duration` and the time window) over the
    /// monitored time.
    public struct SessionsJSON: Codable, Sendable, Equatable {
        /// Session records counted (one per monitored process).
        public var sessions: Int
        /// Sessions stopped cleanly.
        public var cleanlyStopped: Int
        /// Sessions that ended without a clean stop: crashed or killed.
        public var endedUncleanly: Int
        /// Sessions without a clean stop whose process still runs on this machine.
        public var running: Int
        /// Session records outside `--since`/`--until`.
        public var filteredOut: Int
        /// Monitored time: `monitoredMs` of cleanly stopped sessions, `lastHeartbeatAt - startedAt`
        /// of the others (clipped to the time window).
        public var monitoredMs: Double
        /// ``monitoredMs`` in hours.
        public var monitoredHours: Double
        /// Stalls summarized per monitored hour; absent without monitored time.
        public var stallsPerHour: Double?
        /// Stall time summarized per monitored hour, in milliseconds; absent without monitored time.
        public var stallMsPerHour: Double?
        /// Fatal stalls per monitored hour; absent without monitored time.
        public var fatalPerHour: Double?
        /// Share of monitored time spent stalled (0…1); absent without monitored time.
        public var stalledFraction: Double?
        /// Stalls the monitors detected (the sum of the records' `stalls`, whether or not a report was kept).
        public var stallsRecorded: Int
        /// Awake spans the monitors saw.
        public var spans: Int
        /// Reports the monitors wrote.
        public var reportsWritten: Int
        /// Reports dropped, per reason (sum of the records' `reportsDropped`).
        public var reportsDropped: [String: Int]
        /// Sum of ``reportsDropped``.
        public var reportsDroppedTotal: Int
        /// Stalls summarized whose process has no session record.
        public var stallsWithoutSession: Int
        /// Earliest session start.
        public var firstStartedAt: Date?
        /// Latest session end (clean stop or last heartbeat).
        public var lastEndedAt: Date?
        /// Files of the sessions that ended without a clean stop.
        public var uncleanSessions: [String]

        /// Creates the JSON form of session totals.
        package init(_ totals: SessionTotals, rates: StallRates?, stallsWithoutSession: Int) {
            sessions = totals.sessions
            cleanlyStopped = totals.cleanlyStopped
            endedUncleanly = totals.endedUncleanly
            running = totals.running
            filteredOut = totals.filteredOut
            monitoredMs = totals.monitoredMs
            monitoredHours = totals.monitoredHours
            stallsPerHour = rates?.stallsPerHour
            stallMsPerHour = rates?.stallMsPerHour
            fatalPerHour = rates?.fatalPerHour
            stalledFraction = rates?.stalledFraction
            stallsRecorded = totals.stallsRecorded
            spans = totals.spans
            reportsWritten = totals.reportsWritten
            reportsDropped = totals.reportsDropped
            reportsDroppedTotal = totals.reportsDroppedTotal
            self.stallsWithoutSession = stallsWithoutSession
            firstStartedAt = totals.firstStartedAt
            lastEndedAt = totals.lastEndedAt
            uncleanSessions = totals.uncleanPaths
        }
    }

    /// One scene with `--group-by scene`: the same ``GroupJSON`` numbers as a fingerprint group
    /// (read as `sceneJSON.count` …), with the scene, its distinct fingerprints and the worst one.
    public struct SceneJSON: GroupNumbersJSON, Codable, Sendable, Equatable {
        /// The scene; absent for the group of stalls without a scene.
        public var scene: String?
        /// Distinct fingerprints among the scene's stalls.
        public var fingerprints: Int
        /// Fingerprint of the longest stall.
        public var worstFingerprint: String
        /// The group's numbers, encoded inline.
        public var numbers: GroupJSON

        /// Creates the JSON form of a scene group.
        package init(_ stats: FingerprintStats, rates: StallRates? = nil) {
            scene = stats.fingerprint.isEmpty ? nil : stats.fingerprint
            fingerprints = stats.distinctFingerprints
            worstFingerprint = stats.worst.fingerprint
            numbers = GroupJSON(stats, rates: rates)
        }

        private enum CodingKeys: String, CodingKey {
            case scene, fingerprints, worstFingerprint
        }

        /// Decodes the scene's keys and the numbers from the same object.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            scene = try container.decodeIfPresent(String.self, forKey: .scene)
            fingerprints = try container.decode(Int.self, forKey: .fingerprints)
            worstFingerprint = try container.decode(String.self, forKey: .worstFingerprint)
            numbers = try GroupJSON(from: decoder)
        }

        /// Encodes the scene's keys and the numbers into one object (no `scene` key for no scene).
        public func encode(to encoder: any Encoder) throws {
            try numbers.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(scene, forKey: .scene)
            try container.encode(fingerprints, forKey: .fingerprints)
            try container.encode(worstFingerprint, forKey: .worstFingerprint)
        }
    }
}

extension SummaryJSON {
    /// One loop with `--group-by loop`: the same ``GroupJSON`` numbers as a fingerprint group, with
    /// the loop's kind and thread, its distinct fingerprints and the worst one.
    public struct LoopJSON: GroupNumbersJSON, Codable, Sendable, Equatable {
        /// The loop kind (`runLoop`, `nioEventLoop`, `mainActor`); absent when unknown.
        public var kind: String?
        /// The loop's thread name (`NIO-ELT-0-#1`); absent when unknown.
        public var thread: String?
        /// Distinct fingerprints among the loop's stalls.
        public var fingerprints: Int
        /// Fingerprint of the longest stall.
        public var worstFingerprint: String
        /// The group's numbers, encoded inline.
        public var numbers: GroupJSON

        /// Creates the JSON form of a loop group (its key is `<kind> <thread>`).
        package init(_ stats: FingerprintStats, rates: StallRates? = nil) {
            let parts = stats.fingerprint.split(separator: " ", maxSplits: 1).map(String.init)
            kind = parts.first
            thread = parts.count > 1 ? parts[1] : nil
            fingerprints = stats.distinctFingerprints
            worstFingerprint = stats.worst.fingerprint
            numbers = GroupJSON(stats, rates: rates)
        }

        private enum CodingKeys: String, CodingKey {
            case kind, thread, fingerprints, worstFingerprint
        }

        /// Decodes the loop's keys and the numbers from the same object.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            kind = try container.decodeIfPresent(String.self, forKey: .kind)
            thread = try container.decodeIfPresent(String.self, forKey: .thread)
            fingerprints = try container.decode(Int.self, forKey: .fingerprints)
            worstFingerprint = try container.decode(String.self, forKey: .worstFingerprint)
            numbers = try GroupJSON(from: decoder)
        }

        /// Encodes the loop's keys and the numbers into one object.
        public func encode(to encoder: any Encoder) throws {
            try numbers.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(kind, forKey: .kind)
            try container.encodeIfPresent(thread, forKey: .thread)
            try container.encode(fingerprints, forKey: .fingerprints)
            try container.encode(worstFingerprint, forKey: .worstFingerprint)
        }
    }
}
