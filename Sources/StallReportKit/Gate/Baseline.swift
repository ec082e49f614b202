import Foundation

/// The known stalls of a project: fingerprints with their counts and durations, recorded by
/// `stallreport baseline` and compared against by `stallreport gate --baseline`.
///
/// File format (JSON, `baselineVersion` 1):
/// `{"baselineVersion": 1, "createdAt": "…", "reports": 12, "fingerprints": [{"fingerprint": "…",
/// "count": 3, "p50Ms": …, "p95Ms": …, "maxMs": …, "totalMs": …, "topFrame": "…"}]}`.
/// `topFrame` is for people reading the file; the gate ignores it.
public struct Baseline: Codable, Sendable, Equatable {
    /// The file layout version this code reads and writes.
    static let currentVersion = 1

    /// One known fingerprint.
    public struct Entry: Codable, Sendable, Equatable {
        /// The fingerprint.
        public var fingerprint: String
        /// Stalls recorded.
        public var count: Int
        /// Nearest-rank median duration.
        public var p50Ms: Double
        /// Nearest-rank 95th percentile duration.
        public var p95Ms: Double
        /// Longest duration.
        public var maxMs: Double
        /// Sum of durations.
        public var totalMs: Double
        /// The top frame, to help people recognise the stall; not used for comparisons.
        public var topFrame: String?

        /// Creates an entry.
        package init(
            fingerprint: String, count: Int, p50Ms: Double, p95Ms: Double, maxMs: Double, totalMs: Double,
            topFrame: String?
        ) {
            self.fingerprint = fingerprint
            self.count = count
            self.p50Ms = p50Ms
            self.p95Ms = p95Ms
            self.maxMs = maxMs
            self.totalMs = totalMs
            self.topFrame = topFrame
        }

        /// The entry recording a blocking call site: keyed `<fingerprint>@<thread kind>` (one call
        /// from one stack may block a pool worker and an event loop: two sites).
        package init(blocking site: BlockingCallSiteStats) {
            self.init(
                fingerprint: "\(site.fingerprint)@\(site.loopKind)", count: site.count, p50Ms: site.p50Ms,
                p95Ms: site.p95Ms,
                maxMs: site.maxMs, totalMs: site.totalMs, topFrame: "\(site.call) from \(site.callSite ?? "?")")
        }

        /// The entry recording a group's statistics.
        package init(_ stats: FingerprintStats) {
            self.init(
                fingerprint: stats.fingerprint, count: stats.count, p50Ms: stats.p50Ms, p95Ms: stats.p95Ms,
                maxMs: stats.maxMs, totalMs: stats.totalMs, topFrame: stats.headline)
        }
    }

    /// File layout version (1).
    package var baselineVersion: Int
    /// When the baseline was recorded.
    public var createdAt: Date
    /// Number of stalls recorded.
    public var reports: Int
    /// Known fingerprints, sorted by fingerprint so the file diffs well.
    public var fingerprints: [Entry]
    /// Known blocking call sites (from `blocking-*.json` reports), keyed `<fingerprint>@<thread
    /// kind>`, sorted; absent in a baseline recorded from no blocking-calls report, which the
    /// gate then does not compare blocking calls against.
    public var blockingCallSites: [Entry]?

    /// Creates a baseline.
    package init(createdAt: Date, reports: Int, fingerprints: [Entry]) {
        self.baselineVersion = Self.currentVersion
        self.createdAt = createdAt
        self.reports = reports
        self.fingerprints = fingerprints.sorted { $0.fingerprint < $1.fingerprint }
    }

    /// Records the groups of a collection.
    public init(stats: [FingerprintStats], createdAt: Date = Date()) {
        self.init(createdAt: createdAt, reports: stats.reduce(0) { $0 + $1.count }, fingerprints: stats.map(Entry.init))
    }

    /// Records the groups of a collection and its blocking call sites (nil: no blocking-calls
    /// report was read).
    package init(stats: [FingerprintStats], blockingCallSites: [BlockingCallSiteStats]?, createdAt: Date = Date()) {
        self.init(stats: stats, createdAt: createdAt)
        self.blockingCallSites = blockingCallSites.map {
            $0.map(Entry.init(blocking:)).sorted { $0.fingerprint < $1.fingerprint }
        }
    }

    /// Entries by fingerprint.
    package var byFingerprint: [String: Entry] {
        Dictionary(fingerprints.map { ($0.fingerprint, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Pretty JSON with sorted keys and a trailing newline.
    public func encoded() throws -> Data {
        var data = try ReportCoding.makeEncoder(pretty: true).encode(self)
        data.append(0x0a)
        return data
    }

    /// Reads a baseline file; the error is one line for people.
    public static func load(path: String) throws(ConfigFileError) -> Baseline {
        let data = try ConfigFile.read(path: path, what: "baseline")
        do {
            let baseline = try ReportCoding.makeDecoder().decode(Baseline.self, from: data)
            guard baseline.baselineVersion == currentVersion else {
                throw ConfigFileError(
                    path: path,
                    message:
                        "unsupported baselineVersion \(baseline.baselineVersion) (this tool reads \(currentVersion))")
            }
            return baseline
        } catch let error as ConfigFileError {
            throw error
        } catch {
            throw ConfigFileError(path: path, message: "not a baseline file: \(ConfigFile.describe(error))")
        }
    }
}
