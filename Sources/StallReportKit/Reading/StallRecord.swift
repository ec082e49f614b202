import Foundation

/// The few facts of one report that summaries, gates and diffs need. A report is reduced to this
/// as soon as it is decoded, so whole reports are never kept. Its strings are printable: control
/// characters in the report's fingerprint, file name, frames, syscall, scene and loop are
/// escaped visibly, so no output of them can drive a terminal or a CI runner.
public struct StallRecord: Sendable, Equatable {
    /// The report's fingerprint.
    public var fingerprint: String
    /// Stall duration in milliseconds.
    public var durationMs: Double
    /// When the stall began.
    public var startedAt: Date
    /// Ended, in progress or fatal.
    public var status: StallStatus
    /// What the stuck thread was doing.
    public var classification: StallClassification
    /// The file the report came from.
    public var path: String
    /// Top frames of the representative stack.
    public var stack: [StackFrameSummary]
    /// The syscall of the first syscall sample, for stalls without a usable stack.
    package var syscall: String?
    /// The host app's scene when the stall began, if it set one.
    public var scene: String?
    /// True for a compact report written because its fingerprint was rate limited (no samples;
    /// counted like any other stall).
    package var rateLimited: Bool
    /// Host name of the process that stalled.
    package var hostName: String?
    /// Process id of the process that stalled.
    package var pid: Int?
    /// The loop that stalled: its kind and thread name (`nioEventLoop NIO-ELT-0-#1`), when known.
    package var loop: String?
    /// The app's own async callers of the representative stack, innermost first (from
    /// `StallReport/representativeAsyncCallers`, thunks left out); empty when it has none.
    package var asyncCallers: [StackFrameSummary] = []

    /// Creates a record.
    package init(
        fingerprint: String, durationMs: Double, startedAt: Date, status: StallStatus,
        classification: StallClassification, path: String,
        stack: [StackFrameSummary], syscall: String?, scene: String? = nil, rateLimited: Bool = false,
        hostName: String? = nil, pid: Int? = nil,
        loop: String? = nil, asyncCallers: [StackFrameSummary] = []
    ) {
        self.asyncCallers = asyncCallers.map(\.printable)
        self.fingerprint = PrintableText.escape(fingerprint)
        self.durationMs = durationMs
        self.startedAt = startedAt
        self.status = StallStatus(rawValue: PrintableText.escape(status.rawValue))
        self.classification = StallClassification(rawValue: PrintableText.escape(classification.rawValue))
        self.path = PrintableText.escape(path)
        self.stack = stack.map(\.printable)
        self.syscall = syscall.map(PrintableText.escape)
        self.scene = scene.map(PrintableText.escape)
        self.rateLimited = rateLimited
        self.hostName = hostName
        self.pid = pid
        self.loop = loop.map(PrintableText.escape)
    }

    /// Reduces a decoded report to a record. An `inProgress` report of a process that no longer
    /// runs on this host counts as `fatal` (see `StaleStatus`).
    package init(report: StallReport, path: String) {
        self.init(
            fingerprint: report.fingerprint,
            durationMs: report.durationMs,
            startedAt: report.startedAt,
            status: StaleStatus.effectiveStatus(of: report),
            classification: report.classification,
            path: path,
            stack: StackFrameSummary.representative(of: report),
            syscall: report.samples.first(where: { $0.syscall != nil })?.syscall,
            scene: report.scene,
            rateLimited: report.rateLimited ?? false,
            hostName: report.process.hostName,
            pid: report.process.pid,
            loop: "\(report.loop.kind) \(report.loop.threadName)",
            asyncCallers: StackFrameSummary.asyncCallers(of: report)
        )
    }
}
