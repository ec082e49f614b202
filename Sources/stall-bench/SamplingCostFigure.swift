import Foundation

/// Figure 4: work the stuck thread gets through during a 2 s stall while it is sampled every
/// 10 ms, against the same stall without the monitor.
enum SamplingCostFigure {
    struct Work {
        var units: Int
        var wall: UInt64
        var cpu: Int64
        var perSecond: Double { Double(units) / (Double(wall) / 1e9) }
        var perCPUSecond: Double { Double(units) / (Double(max(cpu, 1)) / 1e9) }
    }

    static func run(_ context: BenchContext) throws -> FigureResult {
        let pairs = context.pick(7, quick: 1)
        let seconds = context.pick(2.0, quick: 0.4)
        let table = Workloads.makeTable()
        defer { table.deallocate() }
        _ = stall(seconds: 0.2, table: table)  // warm-up
        var with: [Work] = []
        var without: [Work] = []
        var samples: [Double] = []
        for pair in 0..<pairs {
            for monitored in pair % 2 == 0 ? [false, true] : [true, false] {
                if monitored {
                    let session = try MonitorSession(context)
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
        let value = "ratio \(Format.ratio(ratio)) (\(Int(Stats.median(samples))) samples per stall; per thread-CPU s \(Format.ratio(cpuRatio)))"
        let method = "\(pairs) alternating pairs of \(seconds) s CPU-bound stalls (hash work units) in a main-RunLoop timer; monitor with threshold 250 ms, sampling every 10 ms from 125 ms vs no monitor; work units per wall second, median of pair ratios"
        return FigureResult(figure: .samplingCost, rows: [
            .judged("4", "Work done during a \(Int(seconds)) s stall, sampled vs not", value: value, goal: "ratio ≥ 0.995", ok: ratio >= 0.995, method: method,
                    data: ["ratio": ratio, "ratioPerCPUSecond": cpuRatio, "samplesPerStall": Stats.median(samples),
                           "unitsPerSecondWith": Stats.median(with.map(\.perSecond)), "unitsPerSecondWithout": Stats.median(without.map(\.perSecond))]),
        ])
    }

    /// A stall of `seconds` in a main-loop timer callout doing work units; returns how many.
    private static func stall(seconds: Double, table: UnsafeMutablePointer<UInt64>) -> Work {
        let result = Box(Work(units: 0, wall: 0, cpu: 0))
        nonisolated(unsafe) let table = table
        MainLoop.run(steps: [.init(gap: 0.02) {
            let began = CStallClock.now()
            let cpu = CStallClock.threadCPU()
            let (units, sink) = Workloads.workUntil(began + UInt64(seconds * 1e9), table: table)
            let end = CStallClock.now()
            result.value = Work(units: units, wall: end - began, cpu: CStallClock.threadCPU() - cpu)
            Workloads.blackHole(sink)
        }])
        return result.value
    }
}
