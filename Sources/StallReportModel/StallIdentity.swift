import Foundation

/// What a report's identity is derived from: its representative stack (and that stack's
/// syscall), its representative async callers and the fingerprint computed from them.
///
/// The monitor derives it when it writes a report, and `stallreport symbolicate` again when it
/// names frames the monitor could not (a stripped binary, `symbolicateInProcess: false`): one
/// derivation for both, so a stall named offline gets the fingerprint it gets when named in
/// the process.
public struct StallIdentity: Sendable, Equatable {
    /// The representative stack: frame indices, leaf first (``RepresentativeStack``).
    public var stack: [Int]
    /// The syscall of the samples the representative stack stands for.
    public var syscall: String?
    /// The representative async callers (``RepresentativeAsyncCallers``), or nil.
    public var asyncCallers: [Int]?
    /// How many of ``asyncCallers``, from the innermost, were entered in the stalled job (they do
    /// not count in the fingerprint); nil when not known.
    public var asyncCallersInJob: Int?
    /// The fingerprint (``Fingerprint``).
    public var fingerprint: String

    /// Creates an identity from its parts.
    public init(
        stack: [Int], syscall: String?, asyncCallers: [Int]?, asyncCallersInJob: Int? = nil, fingerprint: String
    ) {
        self.stack = stack
        self.syscall = syscall
        self.asyncCallers = asyncCallers
        self.asyncCallersInJob = asyncCallersInJob
        self.fingerprint = fingerprint
    }

    /// The identity of a stall from its samples and frames, as the monitor writes it.
    public static func derive(
        samples: [StallReport.Sample], frames: [StallReport.Frame], classification: StallClassification,
        images: [StallReport.Image]
    ) -> StallIdentity {
        let representative = RepresentativeStack.find(samples: samples, frames: frames)
        let stack = representative?.stack ?? []
        let chain = RepresentativeAsyncCallers.choose(samples: samples, frames: frames)
        let fingerprint = Fingerprint.of(
            stack: stack, asyncCallers: chain?.callers, asyncCallersInJob: chain?.inJob, frames: frames,
            classification: classification, syscall: representative?.syscall, images: images)
        return StallIdentity(
            stack: stack, syscall: representative?.syscall, asyncCallers: chain?.callers,
            asyncCallersInJob: chain?.inJob,
            fingerprint: fingerprint)
    }
}

extension Fingerprint {
    /// The fingerprint of a representative stack and async callers given as frame indices
    /// (invalid indices are skipped); the first `asyncCallersInJob` callers (entered in the
    /// stalled job: a chain read from the job start lacks them) do not count.
    public static func of(
        stack: [Int], asyncCallers: [Int]?, asyncCallersInJob: Int? = nil, frames: [StallReport.Frame],
        classification: StallClassification, syscall: String?, images: [StallReport.Image]
    ) -> String {
        let pick = { (indices: ArraySlice<Int>) in indices.compactMap { frames.indices.contains($0) ? frames[$0] : nil }
        }
        let callers = (asyncCallers ?? [])[...]
        return make(
            components(
                stack: pick(stack[...]), classification: classification, syscall: syscall, images: images,
                asyncCallers: pick(callers.dropFirst(min(max(asyncCallersInJob ?? 0, 0), callers.count)))))
    }
}
