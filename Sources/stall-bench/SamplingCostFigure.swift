import Foundation

/// Figure 4: work the stuck thread gets through during a 2 s stall while it is sampled every
/// 10 ms, against the same stall without the monitor (default configuration: the in-progress
/// report is also rewritten every second while the stall lasts).
enum SamplingCostFigure {
    struct Work {
        var units: Int
        var wall: UInt64
        var cpu: Int64
        /// CPU time of the process's other threads during the stall (the monitor's watchdog and writer).
        var otherCPU: Double
        var perSecond: Double { Double(units) / (Double(wall) / 1e9) }
        var perCPUSecond: Double { Double(units) / (Double(max(cpu, 1)) / 1e9) }
    }

    static func run(_ context: BenchContext) throws -> FigureResult {
        let pairs = context.pick(12, quick: 1)
        let seconds = context.pick(2.0, quick: 0.4)
        let table = Workloads.makeTable()
        defer { table.deallocate() }
        _ = stall(seconds: 0.2, table: table)  // warm-up
        var rows: [ResultRow] = []
        for (part, label, refresh) in [
            ("4", "default configuration (samples every 10 ms; the in-progress report is rewritten every 1 s)", nil)
        ] as [(String, String, Duration?)] {
            var with: [Work] = []
            var without: [Work] = []
            var samples: [Double] = []
            for pair in 0..<pairs {
                for monitored in pair % 2 == 0 ? [false, true] : [true, false] {
                    if monitored {
                        let session = try MonitorSession(context, inProgressRefresh: refresh)
                        let before = session.monitor.statistics.samplesTaken
                        with.append(stall(seconds: seconds, table: table))
                        session.stop()  // waits for the report, so writing it does not overlap the next run
                        samples.append(Double(session.monitor.statistics.samplesTaken - before))
                    } else {
                        without.append(stall(seconds: seconds, table: table))
                    }
                }
            }
            let ratio = Stats.median(zip(with, without).map { $0.perSecond / $1.perSecond })
            let cpuRatio = Stats.median(zip(with, without).map { $0.perCPUSecond / $1.perCPUSecond })
            let other = Stats.median(with.map(\.otherCPU)) - Stats.median(without.map(\.otherCPU))
            let value =
                "ratio \(Format.ratio(cpuRatio)) per thread-CPU s (per wall s \(Format.ratio(ratio))); \(Int(Stats.median(samples))) samples; monitor threads used \(Format.milli(other / 1e6, 1)) CPU"
            let method =
                "\(pairs) alternating pairs of \(seconds) s CPU-bound stalls (hash work units) in a main-RunLoop timer; monitor with threshold 250 ms, sampling every 10 ms from 125 ms vs no monitor; work units per CPU second of the stuck thread (its own CPU clock: immune to preemption by other processes on a shared machine), median of pair ratios"
            rows.append(
                .judged(
                    part, "Work done during a \(Int(seconds)) s stall, sampled vs not: \(label)", value: value,
                    goal: "ratio ≥ 0.995",
                    ok: cpuRatio >= 0.995, method: method,
                    data: [
                        "ratioPerCPUSecond": cpuRatio, "ratioPerWallSecond": ratio,
                        "samplesPerStall": Stats.median(samples),
                        "monitorThreadsCPUNanoseconds": other,
                        "unitsPerSecondWith": Stats.median(with.map(\.perSecond)),
                        "unitsPerSecondWithout": Stats.median(without.map(\.perSecond)),
                    ]))
        }
        return FigureResult(figure: .samplingCost, rows: rows)
    }

    /// A stall of `seconds` in a main-loop timer callout doing work units; returns how many.
    private static func stall(seconds: Double, table: UnsafeMutablePointer<UInt64>) -> Work {
        let result = Box(Work(units: 0, wall: 0, cpu: 0, otherCPU: 0))
        nonisolated(unsafe) let table = table
        MainLoop.run(steps: [
            .init(gap: 0.02) {
                let began = CStallClock.now()
                let cpu = CStallClock.threadCPU()
                let process = CStallClock.processCPU()
                let (units, sink) = Workloads.workUntil(began + UInt64(seconds * 1e9), table: table)
                let end = CStallClock.now()
                let threadCPU = CStallClock.threadCPU() - cpu
                result.value = Work(
                    units: units, wall: end - began, cpu: threadCPU,
                    otherCPU: CStallClock.processCPU() - process - Double(threadCPU))
                Workloads.blackHole(sink)
            }
        ])
        return result.value
    }
}
