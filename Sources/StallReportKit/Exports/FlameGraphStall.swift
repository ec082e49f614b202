import Foundation

/// One stall as the flame graph needs it: the facts its header sums up and its samples' stacks,
/// compact (``SampleStacks``), so that a flame graph of many or very large reports keeps no
/// profile of any.
package struct FlameGraphStall: Sendable {
    /// The stall's fingerprint.
    package var fingerprint: String
    /// When it started.
    package var startedAt: Date
    /// How long it lasted, in milliseconds.
    package var durationMs: Double
    /// Its classification.
    package var classification: StallClassification
    /// The executable it happened in.
    package var executableName: String
    /// Its samples' stacks, weighted.
    package var stacks: SampleStacks

    /// The stall of a decoded report (`path` is not needed: the signature fits report readers).
    package init(report: StallReport, path: String, includingMonitorFrames: Bool = false) {
        let facts = StallFacts(report: report, path: path)
        fingerprint = facts.fingerprint
        startedAt = facts.startedAt
        durationMs = facts.durationMs
        classification = facts.classification
        executableName = report.process.executableName
        stacks = SampleStacks(report: report, includingMonitorFrames: includingMonitorFrames)
    }

    /// The stall of a profile.
    package init(profile: StallProfile) {
        fingerprint = profile.fingerprint
        startedAt = profile.startedAt
        durationMs = profile.durationMs
        classification = profile.classification
        executableName = profile.executableName
        stacks = SampleStacks(profiles: [profile])
    }
}
