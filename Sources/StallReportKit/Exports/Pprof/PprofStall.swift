import Foundation

/// What the pprof export keeps of one report: its samples with their frame and image tables
/// (addresses and build IDs, which ``StallProfile`` drops) and the facts that become labels.
@dynamicMemberLookup
public struct PprofStall: Sendable {
    /// Which stall, who stalled, when, for how long, and the time each sample stands for.
    public var facts: StallFacts
    /// The loop kind, e.g. `runLoop` or `nio`.
    package var loopKind: String
    /// The samples, oldest first.
    package var samples: [StallReport.Sample]
    /// The report's frame table.
    package var frames: [StallReport.Frame]
    /// The report's image table.
    package var images: [StallReport.Image]

    /// Reduces a decoded report to what the export needs.
    public init(report: StallReport, path: String) {
        facts = StallFacts(report: report, path: path)
        loopKind = report.loop.kind
        // Samples with async callers are exported as their logical stack; the others are kept
        // as they are (the report's array is shared, not copied, when none has callers).
        var samples = report.samples
        for index in samples.indices
        where samples[index].kind == .stack && !(samples[index].asyncCallers?.isEmpty ?? true) {
            samples[index].frames = samples[index].logicalFrames(in: report.frames)
        }
        self.samples = samples
        frames = report.frames
        images = report.images
    }

    /// A fact of the stall (`stall.fingerprint`, `stall.pid`, …).
    public subscript<Value>(dynamicMember keyPath: KeyPath<StallFacts, Value>) -> Value { facts[keyPath: keyPath] }
}
