import Foundation

/// What the pprof export keeps of one report: its samples with their frame and image tables
/// (addresses and build IDs, which ``StallProfile`` drops) and the facts that become labels.
public struct PprofStall: Sendable {
    /// The report's id.
    public var id: String
    /// The report's fingerprint.
    public var fingerprint: String
    /// `cpu`, `blocked`, `mixed` or `congestion`.
    public var classification: String
    /// The loop kind, e.g. `runLoop` or `nio`.
    public var loopKind: String
    /// Name of the stuck thread.
    public var threadName: String
    /// Kernel thread id of the stuck thread.
    public var threadID: Int
    /// Process id.
    public var pid: Int
    /// When the stall began.
    public var startedAt: Date
    /// Duration of the stall in milliseconds.
    public var durationMs: Double
    /// Time each sample stands for, in milliseconds (see ``StallProfile/sampleWeightMs(of:)``).
    public var intervalMs: Double
    /// The samples, oldest first.
    public var samples: [StallReport.Sample]
    /// The report's frame table.
    public var frames: [StallReport.Frame]
    /// The report's image table.
    public var images: [StallReport.Image]
    /// The file the report came from.
    public var path: String

    /// Reduces a decoded report to what the export needs.
    public init(report: StallReport, path: String) {
        id = report.id
        fingerprint = report.fingerprint
        classification = report.classification.rawValue
        loopKind = report.loop.kind
        threadName = report.loop.threadName
        threadID = report.loop.threadID
        pid = report.process.pid
        startedAt = report.startedAt
        durationMs = report.durationMs
        intervalMs = StallProfile.sampleWeightMs(of: report)
        samples = report.samples
        frames = report.frames
        images = report.images
        self.path = path
    }
}
