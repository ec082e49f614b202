import Foundation

/// Picks the stack that stands for a whole stall; the fingerprint is computed from it. Used by
/// the monitor when it writes a report and by `stallreport symbolicate` when names arrive later.
public enum RepresentativeStack {
    /// The representative stack (frame indices, leaf first) and its syscall: the heaviest common
    /// path of the samples' call tree. From the root down, it follows the function most samples
    /// pass through, as long as at least half of all samples do. A loop that calls small helpers is
    /// thus represented by the loop, not by whichever helper was sampled most (which would make
    /// the fingerprint flip between runs). The kind most samples have decides (full stacks, or
    /// syscall-only samples where stacks could not be unwound), never a single sample of the
    /// other kind. Of the samples that agree on a frame's function, the first whose frame has a
    /// source line provides it, so the leaf keeps its file:line when any sample has one.
    ///
    /// Frames of the monitor's own code (``StallReport/Frame/monitor``) are skipped.
    ///
    /// Only whole stacks (those that reach the thread's entry) vote when the chosen kind has any:
    /// a truncated walk has no root, so it cannot be placed in the tree from the root down, and
    /// counting it against the majority made the path stop one frame earlier or later from run to
    /// run (a third of the samples of a ThreadSanitizer build end in the vDSO, where TSan delivers
    /// the signal late). Truncated stacks decide only when no whole stack exists.
    public static func find(
        samples: [StallReport.Sample], frames: [StallReport.Frame]
    ) -> (stack: [Int], syscall: String?)? {
        let stacks = samples.count { $0.kind == .stack && !$0.frameIndices.isEmpty }
        let syscallOnly = samples.count { $0.kind == .syscall && !$0.frameIndices.isEmpty }
        let kinds: [StallReport.Sample.Kind] = stacks >= syscallOnly ? [.stack, .syscall] : [.syscall, .stack]
        for kind in kinds {
            let ofKind = samples.filter { $0.kind == kind && !$0.frameIndices.isEmpty }
            guard !ofKind.isEmpty else { continue }
            let whole = ofKind.filter { $0.truncated != true }
            let voters = whole.isEmpty ? ofKind : whole
            // The monitor's own frames (an interposer a debug build keeps and a release build may
            // tail-call through) are not part of any path: the same stall gets the same stack in both.
            let paths = voters.map { voter in
                voter.frameIndices.reversed().filter { !frames.indices.contains($0) || !frames[$0].isMonitorCode }
            }
            let syscalls = voters.map(\.syscall)
            var members = Array(paths.indices)
            let needed = (paths.count + 1) / 2
            var path: [Int] = []
            var depth = 0
            // Frames are compared by function (symbol), not address: a leaf PC differs in every
            // sample of a loop, and a caller appears as a return address.
            func key(_ frame: Int) -> String { frames[frame].symbol ?? frames[frame].address }
            while true {
                var counts: [String: (count: Int, first: Int)] = [:]
                for member in members where paths[member].count > depth {
                    let frameKey = key(paths[member][depth])
                    let entry = counts[frameKey] ?? (0, member)
                    counts[frameKey] = (entry.count + 1, entry.first)
                }
                guard
                    let best = counts.max(by: { ($0.value.count, -$0.value.first) < ($1.value.count, -$1.value.first) }
                    ),
                    best.value.count >= needed
                else { break }
                let agreeing = members.filter { paths[$0].count > depth && key(paths[$0][depth]) == best.key }
                let withLine = agreeing.first { frames[paths[$0][depth]].line != nil }
                path.append(paths[withLine ?? best.value.first][depth])
                members = agreeing
                depth += 1
            }
            if path.isEmpty { continue }
            let syscall = members.lazy.compactMap { syscalls[$0] }.first
            return (Array(path.reversed()), syscall)
        }
        return nil
    }
}

extension StallReport {
    /// The first in-app function of the representative stack (the function that stalled, or
    /// called what did), for one-line output: its symbol, or `in <syscall>` when the samples have
    /// only a syscall, or `(no stack)`. Linker stubs and a sanitizer's runtime (linked into the
    /// app by an instrumented build) are not the app's functions.
    public var representativeFunction: String {
        let stack = representativeStack.compactMap { $0 < frames.count ? frames[$0] : nil }
        let frame =
            stack.first(where: { frame in
                guard frame.inApp, !frame.isMonitorCode, let symbol = frame.symbol else { return false }
                return !Fingerprint.isIgnored(symbol)
            }) ?? stack.first
        let samplesSyscall = samples.first(where: { $0.syscall != nil })?.syscall
        return frame?.symbol ?? samplesSyscall.map { "in \($0)" } ?? "(no stack)"
    }
}
