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
        var run: (_ seconds: Double) -> LoopRate
    }

    /// Passes counted over a run, with the wall and main-thread CPU time they took.
    struct LoopRate {
        var passes: Int
        var wall: UInt64
        var cpu: Int64
        var perSecond: Double { Double(passes) / (Double(wall) / 1e9) }
        var perCPUSecond: Double { Double(passes) / (Double(max(cpu, 1)) / 1e9) }
    }

    static func run(_ context: BenchContext) throws -> FigureResult {
        let pairs = context.pick(15, quick: 1)
        let seconds = context.pick(0.3, quick: 0.05)
        let workloads = [
            Workload(part: "1a", name: "busiest loop (RunLoop.perform chain)", goal: 0.97) { PerformChain.measure(seconds: $0, workNanoseconds: 0) },
            Workload(part: "1b", name: "repeating timer, always due (1 µs interval)", goal: nil) { TimerLoop.measure(seconds: $0) },
            Workload(part: "1c", name: "realistic work (~50 µs per pass)", goal: 0.995) { PerformChain.measure(seconds: $0, workNanoseconds: 50_000) },
        ]
        var rows: [ResultRow] = []
        for workload in workloads {
            _ = workload.run(seconds / 2)  // warm-up
            var with: [LoopRate] = []
            var without: [LoopRate] = []
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
            let ratios = zip(with, without).map { $0.perSecond / $1.perSecond }
            let cpuRatios = zip(with, without).map { $0.perCPUSecond / $1.perCPUSecond }
            let ratio = Stats.median(ratios)
            let withRate = Stats.median(with.map(\.perSecond))
            let withoutRate = Stats.median(without.map(\.perSecond))
            let perPass = (1e9 / withRate - 1e9 / withoutRate)
            let value = "ratio \(Format.ratio(ratio)) (\(Format.count(withRate)) vs \(Format.count(withoutRate)) passes/s; per main-thread CPU s \(Format.ratio(Stats.median(cpuRatios))))"
            let method = "\(pairs) alternating pairs of \(seconds) s runs on the main RunLoop, with a monitor started (threshold 1 h, so no sampling) vs none; median of the pair ratios"
            let data: [String: Double] = [
                "ratio": ratio, "ratioPerCPUSecond": Stats.median(cpuRatios), "passesPerSecondWith": withRate,
                "passesPerSecondWithout": withoutRate, "extraNanosecondsPerPass": perPass,
                "ratioMin": ratios.min() ?? 0, "ratioMax": ratios.max() ?? 0,
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

/// A chain of `RunLoop.perform` blocks, each scheduling the next: every pass runs one block.
final class PerformChain: @unchecked Sendable {
    private var passes = 0
    private let end: UInt64
    private let work: UInt64

    private init(end: UInt64, work: UInt64) {
        self.end = end
        self.work = work
    }

    static func measure(seconds: Double, workNanoseconds: UInt64) -> ObserverOverheadFigure.LoopRate {
        let began = CStallClock.now()
        let cpuBefore = CStallClock.threadCPU()
        let chain = PerformChain(end: began + UInt64(seconds * 1e9), work: workNanoseconds)
        MainLoop.run { finish in chain.step(finish) }
        let finished = CStallClock.now()
        return .init(passes: chain.passes, wall: finished - began, cpu: CStallClock.threadCPU() - cpuBefore)
    }

    private func step(_ done: @escaping @Sendable () -> Void) {
        passes += 1
        let now = CStallClock.now()
        if work > 0 { Workloads.spin(until: now + work) }
        if now >= end { return done() }
        RunLoop.main.perform { self.step(done) }
        CFRunLoopWakeUp(CFRunLoopGetMain())  // CF does not wake a sleeping loop for a new block
    }
}

/// A repeating CFRunLoopTimer with a 1 µs interval: always due, it fires once per loop pass.
final class TimerLoop: @unchecked Sendable {
    private var fired = 0

    static func measure(seconds: Double) -> ObserverOverheadFigure.LoopRate {
        let loop = TimerLoop()
        let began = CStallClock.now()
        let cpuBefore = CStallClock.threadCPU()
        let end = began + UInt64(seconds * 1e9)
        MainLoop.run { finish in
            let timer = CFRunLoopTimerCreateWithHandler(nil, CFAbsoluteTimeGetCurrent(), 1e-6, 0, 0) { timer in
                loop.fired += 1
                if CStallClock.now() >= end {
                    CFRunLoopTimerInvalidate(timer)
                    finish()
                }
            }
            CFRunLoopAddTimer(CFRunLoopGetMain(), timer, kCFRunLoopCommonModes)
        }
        return .init(passes: loop.fired, wall: CStallClock.now() - began, cpu: CStallClock.threadCPU() - cpuBefore)
    }
}
