import Foundation
import StallReportModel

/// The call sites of blocking-calls reports as weighted stacks, for the folded and speedscope
/// exports and the flame graph (`--blocking-calls`): one stack per call site and report, as wide
/// as the time its calls blocked (``BlockingCallsReport/CallSite/totalMs``).
///
/// A stack is read root first: the site's async callers, outermost first (in a Swift task), then
/// the frames of its first call's stack from the caller's side down, and last a synthetic leaf
/// `[blocking <call>]` (the call itself, whose frame the record does not hold). Where a site has
/// async callers, the frames that ran its job (the Swift runtime's job runner, Dispatch's worker,
/// the thread's start) are left out: the async callers stand for the job's callers, as in a stall
/// report's logical stack.
package enum BlockingCallStacks {
    /// The frames of the runtime that starts a job: a stack with async callers is cut above the first.
    static let jobRunners = ["swift::runJobInEstablishedExecutorContext", "swift_job_run"]

    /// The stack of `site`, root first.
    package static func stack(of site: BlockingCallsReport.CallSite) -> [ProfileFrame] {
        logicalFrames(of: site).reversed().map(profileFrame) + [leafFrame(of: site)]
    }

    /// The frames of `site`'s logical stack, leaf first, without the synthetic leaf: its stack
    /// (cut above the job runner where it has async callers), then its async callers.
    package static func logicalFrames(of site: BlockingCallsReport.CallSite) -> [BlockingCallsReport.Frame] {
        let asyncCallers = site.asyncCallers ?? []
        var physical = site.stack
        if !asyncCallers.isEmpty,
            let runner = physical.firstIndex(where: { frame in
                jobRunners.contains { frame.symbol?.hasPrefix($0) == true }
            })
        {
            physical = Array(physical[..<runner])
        }
        return physical + asyncCallers
    }

    /// The synthetic leaf that stands for the call itself: `[blocking <call>]`.
    package static func leafFrame(of site: BlockingCallsReport.CallSite) -> ProfileFrame {
        ProfileFrame(name: "[blocking \(site.call)]", isSynthetic: true)
    }

    /// Every call site of `reports` whose fingerprint is one of `fingerprints` (any, when empty),
    /// each weighing its blocked time in milliseconds.
    package static func stacks(of reports: [BlockingCallsReport], fingerprints: Set<String> = []) -> SampleStacks {
        var stacks = SampleStacks()
        for report in reports {
            for site in report.callSites where fingerprints.isEmpty || fingerprints.contains(site.fingerprint) {
                stacks.add(stack(of: site), weightMs: site.totalMs)
            }
        }
        return stacks
    }

    /// A frame of a blocking-calls report as a profile frame: its symbol (or its address), the
    /// app's unless the name is the C library's, the runtime's or a system library's.
    static func profileFrame(_ frame: BlockingCallsReport.Frame) -> ProfileFrame {
        guard let symbol = frame.symbol, !symbol.isEmpty else { return ProfileFrame(name: frame.address) }
        return ProfileFrame(name: symbol, file: frame.file, inApp: !BlockingCallsReport.isRuntimeName(symbol))
    }
}
