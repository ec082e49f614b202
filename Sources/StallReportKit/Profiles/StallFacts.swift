import Foundation

/// What every per-stall view of a report keeps (``StallProfile``, ``PprofStall``): which stall and
/// where it came from, who stalled, when, for how long, and the time one sample stands for.
public struct StallFacts: Sendable, Equatable {
    /// The report's id.
    public var id: String
    /// The report's fingerprint.
    public var fingerprint: String
    /// The file the report came from.
    public var path: String
    /// When the stall began.
    public var startedAt: Date
    /// Duration of the stall in milliseconds.
    public var durationMs: Double
    /// What the stuck thread was doing.
    public var classification: StallClassification
    /// Process id.
    package var pid: Int
    /// Kernel thread id of the stuck thread.
    package var threadID: Int
    /// Name of the stuck thread.
    public var threadName: String
    /// Time each sample stands for, in milliseconds (see ``sampleWeightMs(of:)``).
    package var intervalMs: Double

    /// The facts of `report`, read from `path`.
    package init(report: StallReport, path: String) {
        id = report.id
        fingerprint = report.fingerprint
        self.path = path
        startedAt = report.startedAt
        durationMs = report.durationMs
        classification = report.classification
        pid = report.process.pid
        threadID = report.loop.threadID
        threadName = report.loop.threadName
        intervalMs = Self.sampleWeightMs(of: report)
    }

    /// The time each sample of `report` stands for: its effective sampling interval, else the
    /// requested one, else 0 (a report with neither says nothing about time).
    package static func sampleWeightMs(of report: StallReport) -> Double {
        let interval =
            report.sampling.effectiveIntervalMs.isFinite && report.sampling.effectiveIntervalMs > 0
            ? report.sampling.effectiveIntervalMs : report.sampling.intervalMs
        return interval.isFinite && interval > 0 ? interval : 0
    }
}
