import Foundation

/// What the pprof export keeps of one report: its samples with their frame and image tables
/// (addresses and build IDs, which ``StallProfile`` drops) and the facts that become labels.
@dynamicMemberLookup
public struct PprofStall: Sendable {
    /// Which stall, who stalled, when, for how long, and the time each sample stands for.
    public var facts: StallFacts
    /// The loop kind, e.g. `runLoop` or `nio`.
    public var loopKind: String
    /// The samples, oldest first.
    public var samples: [StallReport.Sample]
    /// The report's frame table.
    public var frames: [StallReport.Frame]
    /// The report's image table.
    public var images: [StallReport.Image]

    /// Reduces a decoded report to what the export needs.
    public init(report: StallReport, path: String) {
        facts = StallFacts(report: report, path: path)
        loopKind = report.loop.kind
        // Samples with async callers are exported as their logical stack.
        samples = report.samples.map { sample in
            var logical = sample
            if sample.kind == .stack { logical.frames = sample.logicalFrames(in: report.frames) }
            return logical
        }
        frames = report.frames
        images = report.images
    }

    /// A fact of the stall (`stall.fingerprint`, `stall.pid`, …).
    public subscript<Value>(dynamicMember keyPath: KeyPath<StallFacts, Value>) -> Value { facts[keyPath: keyPath] }
}
