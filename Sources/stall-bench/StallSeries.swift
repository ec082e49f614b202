import Foundation
import Glibc
import StallReportKit
import ToolSupport

/// The stalls figures 5 and 6 are read from: one monitor on the main loop; 100 stalls of
/// 260 ms–2 s (CPU spin, `usleep`, a semaphore wait in turn), each measured by the stalling
/// code itself, then 100 spans of 0.9 × the threshold that must not be reported.
enum StallSeries {
    /// One stall as the stalling code measured it.
    struct Stall: Sendable {
        var kind: String
        var requestedMs: Double
        var start: UInt64 = 0
        var end: UInt64 = 0
        var measuredMs: Double { Double(end - start) / 1e6 }
    }

    /// What the series produced.
    struct Outcome {
        var thresholdMs: Double
        var lead: Double
        var intervalMs: Double
        var stalls: [Stall]
        /// Reports of the stalls, in order (matched by order of writing).
        var reports: [MonitorSession.Arrival]
        /// The warm-up stall (first report of the process: libdw opens, caches are cold).
        var coldReport: MonitorSession.Arrival?
        var coldStall: Stall
        var shortSpans: Int
        var shortSpanReports: Int
        var shortSpansDiscarded: Int
    }

    static func run(_ context: BenchContext) throws -> Outcome {
        if let outcome = context.stallSeries { return outcome }
        let count = context.pick(100, quick: 5)
        let threshold = 250.0
        var random = SplitMix64(seed: 0x57a11)
        let kinds = ["cpu", "usleep", "semaphore"]
        let stalls = Box((0..<count).map { Stall(kind: kinds[$0 % 3], requestedMs: random.uniform(260...2_000)) })
        let cold = Box(Stall(kind: "cpu", requestedMs: 300))
        let session = try MonitorSession(context, threshold: .milliseconds(Int64(threshold)))

        // Warm-up: the first report opens libdw and fills the symbol cache.
        MainLoop.run(steps: [.init(gap: 0.05) { perform(&cold.value) }])
        session.settle()
        let warm = session.arrivals.count

        log("   \(count) stalls of 260 ms–2 s …")
        MainLoop.run(
            steps: (0..<count).map { index in
                .init(gap: 0.15) { perform(&stalls.value[index]) }
            })
        session.settle()
        let afterStalls = session.arrivals.count
        let discardedBefore = session.monitor.statistics.shortSpansDiscarded

        let shortCount = context.pick(100, quick: 5)
        log("   \(shortCount) spans of \(Int(threshold * 0.9)) ms …")
        MainLoop.run(
            steps: (0..<shortCount).map { _ in
                .init(gap: 0.03) { Workloads.spin(until: CStallClock.now() + UInt64(threshold * 0.9 * 1e6)) }
            })
        session.stop()
        let arrivals = session.arrivals
        let outcome = Outcome(
            thresholdMs: threshold, lead: session.monitor.configuration.samplingLead,
            intervalMs: session.monitor.configuration.samplingInterval.inMilliseconds,
            stalls: stalls.value, reports: Array(arrivals[warm..<afterStalls]),
            coldReport: warm > 0 ? arrivals[0] : nil, coldStall: cold.value,
            shortSpans: shortCount, shortSpanReports: arrivals.count - afterStalls,
            shortSpansDiscarded: session.monitor.statistics.shortSpansDiscarded - discardedBefore)
        context.stallSeries = outcome
        return outcome
    }

    /// Stalls the calling (main) thread as `stall` says and records when it began and ended.
    private static func perform(_ stall: inout Stall) {
        let nanoseconds = UInt64(stall.requestedMs * 1e6)
        stall.start = CStallClock.now()
        switch stall.kind {
        case "usleep":
            usleep(UInt32(nanoseconds / 1_000))
        case "semaphore":
            let semaphore = DispatchSemaphore(value: 0)
            _ = semaphore.wait(timeout: .now() + .nanoseconds(Int(nanoseconds)))
        default:
            Workloads.spin(until: stall.start + nanoseconds)
        }
        stall.end = CStallClock.now()
    }
}
