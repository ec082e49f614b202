import CoreFoundation
import Foundation

/// Figure 1: loop passes per second with the monitor's observers vs without, on (a) a
/// `RunLoop.perform` chain (the busiest loop), (b) a repeating timer that is always due,
/// (c) a perform chain doing ~50 µs of work per pass. 1a is judged against a bare observer of
/// the same activities (CoreFoundation's own dispatch) measured in the same pairs. The runs
/// without a monitor keep a ``ParkedThread``, so every side is a multi-threaded process.
enum ObserverOverheadFigure {
    /// One loop workload.
    struct Workload {
        var part: String
        var name: String
        var goal: Double?
        /// Also runs with a ``BareObserver`` and judges the monitor against it.
        var bareBaseline = false
        var run: (_ seconds: Double) -> LoopRun
    }

    /// What observes the loop during one run.
    enum Observed: CaseIterable {
        /// No observer of ours (the loop's default mode may keep CF's mask bits of earlier runs).
        case nothing
        /// A ``BareObserver``: CF's dispatch of the probe's activities to empty callbacks.
        case bareObserver
        /// A StallMonitor on the main loop.
        case monitor
        /// No observer, and no thread but the main one (the others run with a ``ParkedThread``):
        /// what a host without threads of its own pays for the monitor's, shown beside 1a.
        case nothingSingleThreaded
    }

    static func run(_ context: BenchContext) throws -> FigureResult {
        let pairs = context.pick(40, quick: 1)
        let seconds = context.pick(0.1, quick: 0.05)
        // A fixed amount of CPU work per pass (~50 µs on this machine), not a time: its CPU cost
        // stays the same when the thread is preempted.
        let units = PerformChain.unitsFor(nanoseconds: 50_000)
        let recorder = PassRecorder(capacity: 2_000_000)
        let workloads = [
            Workload(part: "1a", name: "busiest loop (RunLoop.perform chain)", goal: 0.995, bareBaseline: true) {
                PerformChain.measure(seconds: $0, workUnits: 0, recorder: recorder)
            },
            Workload(part: "1b", name: "repeating timer, always due (1 µs interval)", goal: nil) {
                TimerLoop.measure(seconds: $0, recorder: recorder)
            },
            Workload(part: "1c", name: "realistic work (~50 µs per pass)", goal: 0.995) {
                PerformChain.measure(seconds: $0, workUnits: units, recorder: recorder)
            },
        ]
        var rows: [ResultRow] = []
        for workload in workloads {
            _ = workload.run(seconds / 2)  // warm-up
            var with: [LoopRun] = []
            var without: [LoopRun] = []
            var bare: [LoopRun] = []
            var singleThreaded: [LoopRun] = []
            let kinds: [Observed] = workload.bareBaseline ? Observed.allCases : [.nothing, .monitor]
            for pair in 0..<pairs {
                // Alternate which runs first, so a trend in machine load does not favour either.
                for observed in pair % 2 == 0 ? kinds : kinds.reversed() {
                    switch observed {
                    case .monitor:
                        // A threshold no run reaches: only the observer callbacks are measured here
                        // (sampling during a stall is figure 4).
                        let session = try MonitorSession(context, threshold: .seconds(3600))
                        with.append(workload.run(seconds))
                        session.stop()
                    case .bareObserver:
                        let parked = ParkedThread()
                        let observer = BareObserver()
                        bare.append(workload.run(seconds))
                        observer.remove()
                        parked.stop()
                    case .nothing:
                        let parked = ParkedThread()
                        without.append(workload.run(seconds))
                        parked.stop()
                    case .nothingSingleThreaded:
                        // Only once every other thread has exited (a run that finds one left is skipped).
                        if ProcessThreads.waitUntilAlone(timeout: .milliseconds(200)) {
                            singleThreaded.append(workload.run(seconds))
                        }
                    }
                }
            }
            // The verdict: the typical pass. Each run records every pass's duration; a pass that
            // another process preempted is an outlier, so the median pass is what the loop costs.
            // On a shared 2-core machine whole-run rates swing ±30 % between adjacent runs.
            let ratios = zip(with, without).map { $1.medianPass / $0.medianPass }
            let wallRatios = zip(with, without).map { $0.perSecond / $1.perSecond }
            if ProcessInfo.processInfo.environment["STALL_BENCH_VERBOSE"] != nil {
                log(
                    "   \(workload.part) median-pass ratios: \(ratios.map { Format.fixed($0, 3) }.joined(separator: " "))"
                )
            }
            let ratio = Stats.median(ratios)
            let wallRatio = Stats.median(wallRatios)
            let withPass = Stats.median(with.map(\.medianPass))
            let withoutPass = Stats.median(without.map(\.medianPass))
            let value =
                "ratio \(Format.ratio(ratio)) (median pass \(Format.fixed(withPass, 0)) vs \(Format.fixed(withoutPass, 0)) ns, \(String(format: "%+.0f", withPass - withoutPass)) ns; whole-run passes/s ratio \(Format.ratio(wallRatio)))"
            let method =
                "\(pairs) alternating pairs of \(seconds) s runs on the main RunLoop, with a monitor started (threshold 1 h, so no sampling: that is figure 4) vs none, whose runs keep a parked thread (a monitor's process has threads of its own: from the second thread on, the kernel takes a reference on each file a system call uses and the C library takes its multi-threaded paths, which a host with any thread of its own pays already; 1a shows that cost, from runs with no other thread); every pass timed with the monotonic clock; passes/s = 1 / median pass, median of the pair ratios (interquartile range \(Format.fixed(Stats.percentile(ratios, 25), 3))–\(Format.fixed(Stats.percentile(ratios, 75), 3)))"
            let data: [String: Double] = [
                "ratio": ratio, "ratioWholeRun": wallRatio, "medianPassNanosecondsWith": withPass,
                "medianPassNanosecondsWithout": withoutPass,
                "passesPerSecondWith": Stats.median(with.map(\.perSecond)),
                "passesPerSecondWithout": Stats.median(without.map(\.perSecond)),
                "ratioP25": Stats.percentile(ratios, 25), "ratioP75": Stats.percentile(ratios, 75),
            ]
            if workload.bareBaseline, let goal = workload.goal {
                rows.append(
                    bareJudged(
                        workload, goal: goal, with: with, bare: bare, singleThreaded: singleThreaded,
                        againstNothing: value, method: method, data: data))
            } else if let goal = workload.goal {
                rows.append(
                    .judged(
                        workload.part, "Observer overhead: \(workload.name)", value: value, goal: "ratio ≥ \(goal)",
                        ok: ratio >= goal, method: method, data: data))
            } else {
                rows.append(
                    ResultRow(
                        workload.part, "Observer overhead: \(workload.name)", value: value, goal: "stated",
                        verdict: .info, method: method, data: data))
            }
        }
        return FigureResult(figure: .observerOverhead, rows: rows)
    }

    /// The row of a workload judged against a bare observer: the median pair ratio (bare ÷
    /// monitored median pass), with the ratio to no observer (`againstNothing`) still shown.
    private static func bareJudged(
        _ workload: Workload, goal: Double, with: [LoopRun], bare: [LoopRun], singleThreaded: [LoopRun],
        againstNothing: String, method: String, data: [String: Double]
    ) -> ResultRow {
        let ratios = zip(with, bare).map { $1.medianPass / $0.medianPass }
        if ProcessInfo.processInfo.environment["STALL_BENCH_VERBOSE"] != nil {
            log(
                "   \(workload.part) median-pass ratios against the bare observer: \(ratios.map { Format.fixed($0, 3) }.joined(separator: " "))"
            )
        }
        let ratio = Stats.median(ratios)
        let withPass = Stats.median(with.map(\.medianPass))
        let barePass = Stats.median(bare.map(\.medianPass))
        var data = data
        data["ratioBareObserver"] = ratio
        data["ratioBareObserverP25"] = Stats.percentile(ratios, 25)
        data["ratioBareObserverP75"] = Stats.percentile(ratios, 75)
        data["medianPassNanosecondsBareObserver"] = barePass
        data["passesPerSecondBareObserver"] = Stats.median(bare.map(\.perSecond))
        var value =
            "ratio \(Format.ratio(ratio)) against a bare observer (median pass \(Format.fixed(withPass, 0)) vs \(Format.fixed(barePass, 0)) ns, \(String(format: "%+.0f", withPass - barePass)) ns); against no observer \(againstNothing)"
        if !singleThreaded.isEmpty {
            let alonePass = Stats.median(singleThreaded.map(\.medianPass))
            let nothingPass = data["medianPassNanosecondsWithout"] ?? alonePass
            data["medianPassNanosecondsSingleThreaded"] = alonePass
            data["singleThreadedRuns"] = Double(singleThreaded.count)
            value +=
                "; with no other thread in the process and no observer, median pass \(Format.fixed(alonePass, 0)) ns: a second thread adds \(String(format: "%+.0f", nothingPass - alonePass)) ns"
        }
        let bareMethod =
            "; the baseline: two CFRunLoopObservers with empty C callbacks for the probe's activities at its orders (entry|beforeTimers|afterWaiting first, beforeWaiting|exit last), run in the same rounds (none, bare, monitor, then reversed), median of the bare ÷ monitored pass ratios (interquartile range \(Format.fixed(Stats.percentile(ratios, 25), 3))–\(Format.fixed(Stats.percentile(ratios, 75), 3))); all runs share the loop's default mode, whose observer mask CF never clears, so every side pays the bare dispatch after the first observed run"
        return .judged(
            workload.part, "Observer overhead: \(workload.name)", value: value,
            goal:
                "ratio ≥ \(goal) against a bare observer (our callbacks ≤ \(Format.fixed((1 - goal) * 100, 1)) % beyond CF's dispatch)",
            ok: ratio >= goal, method: method + bareMethod, data: data)
    }
}
