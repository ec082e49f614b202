import CoreFoundation
import Foundation

/// Figure 1: loop passes per second with the monitor's observers vs without, on (a) a
/// `RunLoop.perform` chain (the busiest loop), (b) a repeating timer that is always due,
/// (c) a perform chain doing ~50 µs of work per pass.
enum ObserverOverheadFigure {
    /// One loop workload.
    struct Workload {
        var part: String
        var name: String
        var goal: Double?
        var run: (_ seconds: Double) -> LoopRun
    }


    static func run(_ context: BenchContext) throws -> FigureResult {
        let pairs = context.pick(40, quick: 1)
        let seconds = context.pick(0.1, quick: 0.05)
        // A fixed amount of CPU work per pass (~50 µs on this machine), not a time: its CPU cost
        // stays the same when the thread is preempted.
        let units = PerformChain.unitsFor(nanoseconds: 50_000)
        let recorder = PassRecorder(capacity: 2_000_000)
        let workloads = [
            Workload(part: "1a", name: "busiest loop (RunLoop.perform chain)", goal: 0.97) { PerformChain.measure(seconds: $0, workUnits: 0, recorder: recorder) },
            Workload(part: "1b", name: "repeating timer, always due (1 µs interval)", goal: nil) { TimerLoop.measure(seconds: $0, recorder: recorder) },
            Workload(part: "1c", name: "realistic work (~50 µs per pass)", goal: 0.995) { PerformChain.measure(seconds: $0, workUnits: units, recorder: recorder) },
        ]
        var rows: [ResultRow] = []
        for workload in workloads {
            _ = workload.run(seconds / 2)  // warm-up
            var with: [LoopRun] = []
            var without: [LoopRun] = []
            for pair in 0..<pairs {
                // Alternate which runs first, so a trend in machine load does not favour either.
                for monitored in pair % 2 == 0 ? [false, true] : [true, false] {
                    if monitored {
                        // A threshold no run reaches: only the observer callbacks are measured here
                        // (sampling during a stall is figure 4).
                        let session = try MonitorSession(context, threshold: .seconds(3600))
                        with.append(workload.run(seconds))
                        session.stop()
                    } else {
                        without.append(workload.run(seconds))
                    }
                }
            }
            // The verdict: the typical pass. Each run records every pass's duration; a pass that
            // another process preempted is an outlier, so the median pass is what the loop costs.
            // On a shared 2-core machine whole-run rates swing ±30 % between adjacent runs.
            let ratios = zip(with, without).map { $1.medianPass / $0.medianPass }
            let wallRatios = zip(with, without).map { $0.perSecond / $1.perSecond }
            if ProcessInfo.processInfo.environment["STALL_BENCH_VERBOSE"] != nil {
                log("   \(workload.part) median-pass ratios: \(ratios.map { Format.fixed($0, 3) }.joined(separator: " "))")
            }
            let ratio = Stats.median(ratios)
            let wallRatio = Stats.median(wallRatios)
            let withPass = Stats.median(with.map(\.medianPass))
            let withoutPass = Stats.median(without.map(\.medianPass))
            let value = "ratio \(Format.ratio(ratio)) (median pass \(Format.fixed(withPass, 0)) vs \(Format.fixed(withoutPass, 0)) ns, \(String(format: "%+.0f", withPass - withoutPass)) ns; whole-run passes/s ratio \(Format.ratio(wallRatio)))"
            let method = "\(pairs) alternating pairs of \(seconds) s runs on the main RunLoop, with a monitor started (threshold 1 h, so no sampling: that is figure 4) vs none; every pass timed with the monotonic clock; passes/s = 1 / median pass, median of the pair ratios (interquartile range \(Format.fixed(Stats.percentile(ratios, 25), 3))–\(Format.fixed(Stats.percentile(ratios, 75), 3)))"
            let data: [String: Double] = [
                "ratio": ratio, "ratioWholeRun": wallRatio, "medianPassNanosecondsWith": withPass, "medianPassNanosecondsWithout": withoutPass,
                "passesPerSecondWith": Stats.median(with.map(\.perSecond)), "passesPerSecondWithout": Stats.median(without.map(\.perSecond)),
                "ratioP25": Stats.percentile(ratios, 25), "ratioP75": Stats.percentile(ratios, 75),
            ]
            if let goal = workload.goal {
                rows.append(.judged(workload.part, "Observer overhead: \(workload.name)", value: value, goal: "ratio ≥ \(goal)", ok: ratio >= goal, method: method, data: data))
            } else {
                rows.append(ResultRow(workload.part, "Observer overhead: \(workload.name)", value: value, goal: "stated", verdict: .info, method: method, data: data))
            }
        }
        return FigureResult(figure: .observerOverhead, rows: rows)
    }
}
