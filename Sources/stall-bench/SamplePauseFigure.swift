import Foundation
import StallReportKit

/// Figure 3: how long the stuck thread stops for one stack sample, measured by the thread
/// itself: it reads the clock in a tight loop and records every step longer than 2 µs while
/// the monitor samples it. A gap that begins where a sample was sent is that sample's pause.
/// The same loop without the monitor gives the machine's own gaps (preemption, interrupts).
enum SamplePauseFigure {
    static let floor: UInt64 = 2_000

    /// Gaps of one run with the monitor, matched to its samples.
    struct Run {
        var pauses: [Double]
        var frames: [Double]
        var unmatched: Int
        var samples: Int
        /// All time the thread lost in gaps > 2 µs, ns.
        var lost: Double
    }

    static func run(_ context: BenchContext) throws -> FigureResult {
        let spin = context.pick(1.5, quick: 0.4)
        let repetitions = context.pick(2, quick: 1)
        let recorder = GapRecorder(capacity: 200_000)
        // The stack below the timer callout: measured once, so the targets count whole stacks.
        let base = try monitoredRun(context, depth: 0, spin: 0.4, recorder: recorder).frames
        let baseFrames = Int(Stats.median(base))
        var rows: [ResultRow] = []
        var notes: [String] = []
        for (part, target, goal) in [("3a", 20, 20.0), ("3b", 100, nil), ("3c", 200, 20.0)] as [(String, Int, Double?)]
        {
            let depth = max(0, target - baseFrames)
            var pauses: [Double] = []
            var frames: [Double] = []
            var unmatched = 0
            var samples = 0
            var baselineGaps: [Double] = []
            var baselineSeconds = 0.0
            var lostWith = 0.0
            for _ in 0..<repetitions {
                let run = try monitoredRun(context, depth: depth, spin: spin, recorder: recorder)
                pauses += run.pauses
                frames += run.frames
                unmatched += run.unmatched
                samples += run.samples
                lostWith += run.lost
                recorder.reset()
                MainLoop.run(steps: [
                    .init(gap: 0.02) {
                        _ = Workloads.recurse(depth) {
                            recorder.spin(until: CStallClock.now() + UInt64(spin * 1e9), floor: floor)
                        }
                    }
                ])
                baselineGaps += recorder.gaps.map { Double($0.length) }
                baselineSeconds += spin
            }
            let median = Stats.median(pauses)
            let p99 = Stats.percentile(pauses, 99)
            let stackFrames = Stats.median(frames)
            let baselineRate = Double(baselineGaps.count) / baselineSeconds
            // Cross-check without matching: time lost with the monitor minus without, per sample.
            let byDifference = (lostWith - baselineGaps.reduce(0, +)) / Double(max(samples, 1))
            let value =
                "median \(Format.micro(median)), p99 \(Format.micro(p99)) at \(Int(stackFrames)) frames (\(pauses.count) samples; mean by difference of total lost time \(Format.micro(byDifference)))"
            let method =
                "\(repetitions)× \(spin) s clock-reading spin \(depth) recursions deep on the main RunLoop, threshold 250 ms, 10 ms interval; a sample's pause is the longest gap > 2 µs starting within −30…+200 µs of its send time (report offsetMs, aligned by the one shift that matches most samples); without the monitor the same spin sees \(Format.fixed(baselineRate, 0)) gaps/s > 2 µs (median \(Format.micro(Stats.median(baselineGaps))))"
            let data: [String: Double] = [
                "medianNanoseconds": median, "p99Nanoseconds": p99, "meanByDifferenceNanoseconds": byDifference,
                "frames": stackFrames, "samples": Double(samples),
                "matched": Double(pauses.count), "unmatched": Double(unmatched), "baselineGapsPerSecond": baselineRate,
                "baselineGapMedianNanoseconds": Stats.median(baselineGaps),
                "baselineGapP99Nanoseconds": Stats.percentile(baselineGaps, 99),
            ]
            let name = "Pause per sample, ~\(target) frames"
            if let goal {
                rows.append(
                    .judged(
                        part, name, value: value, goal: "median ≤ \(Int(goal)) µs",
                        ok: median <= goal * 1_000 && !pauses.isEmpty, method: method, data: data))
            } else {
                rows.append(
                    ResultRow(part, name, value: value, goal: "stated", verdict: .info, method: method, data: data))
            }
            if unmatched > 0 {
                notes.append(
                    "~\(target) frames: \(unmatched) of \(samples) samples had no gap > 2 µs near their send time (the send time and the pause did not line up: the watchdog or the stuck thread was preempted in between)"
                )
            }
        }
        return FigureResult(figure: .samplePause, rows: rows, notes: notes)
    }

    /// One monitored stall: the thread spins `spin` s at `depth` recursions; returns the pauses
    /// matched to the report's stack samples.
    static func monitoredRun(_ context: BenchContext, depth: Int, spin: Double, recorder: GapRecorder) throws -> Run {
        recorder.reset()
        let session = try MonitorSession(context)
        let start = Box<UInt64>(0)
        MainLoop.run(steps: [
            .init(gap: 0.02) {
                start.value = CStallClock.now()
                _ = Workloads.recurse(depth) { recorder.spin(until: start.value + UInt64(spin * 1e9), floor: floor) }
            }
        ])
        session.stop()
        guard let report = session.arrivals.last?.report else { throw BenchError("no report for a \(spin) s stall") }
        let stackSamples = report.samples.filter { $0.kind == .stack }
        // Send times on the stalling code's clock, up to one constant: the span opened a few µs
        // before the callout began. The shift that lines the most samples up with a gap is found
        // first; each sample's pause is then the longest gap starting from 30 µs before to 200 µs after it
        // (the send time jitters when the watchdog itself is preempted).
        let sends = stackSamples.map { Int64(start.value) + Int64($0.offsetMs * 1e6) }
        let gaps = recorder.gaps.map { (start: Int64($0.start), length: Double($0.length)) }
        let starts = gaps.map(\.start)
        let shift = PauseMatcher.bestShift(sends: sends, gapStarts: starts)
        if ProcessInfo.processInfo.environment["STALL_BENCH_VERBOSE"] != nil {
            log("   shift \(shift / 1_000) µs")
            for send in sends.prefix(8) {
                let near = PauseMatcher.range(starts, from: send - 2_000_000, to: send + 2_000_000)
                log(
                    "   send: "
                        + near.map { "\((gaps[$0].start - send) / 1_000)µs+\(Int(gaps[$0].length / 1_000))" }.joined(
                            separator: " "))
            }
        }
        var pauses: [Double] = []
        var unmatched = 0
        for send in sends {
            let window = PauseMatcher.range(starts, from: send + shift - 30_000, to: send + shift + 200_000)
            if let longest = window.map({ gaps[$0].length }).max() { pauses.append(longest) } else { unmatched += 1 }
        }
        let frames = stackSamples.map { Double($0.frames.count) }
        return Run(
            pauses: pauses, frames: frames, unmatched: unmatched, samples: stackSamples.count,
            lost: gaps.reduce(0) { $0 + $1.length })
    }
}

/// Lines up sample send times (from a report) with the gaps the stuck thread saw.
enum PauseMatcher {
    /// The constant shift (−400…+100 µs) that puts the most send times just before a gap.
    static func bestShift(sends: [Int64], gapStarts: [Int64]) -> Int64 {
        var best: (shift: Int64, count: Int) = (0, -1)
        for shift in stride(from: Int64(-400_000), through: 100_000, by: 2_000) {
            let count = sends.filter { !range(gapStarts, from: $0 + shift, to: $0 + shift + 30_000).isEmpty }.count
            if count > best.count { best = (shift, count) }
        }
        return best.shift
    }

    /// Indices of the sorted `values` within `from...to`.
    static func range(_ values: [Int64], from: Int64, to: Int64) -> Range<Int> {
        func lowerBound(_ target: Int64) -> Int {
            var low = 0
            var high = values.count
            while low < high {
                let middle = (low + high) / 2
                if values[middle] < target { low = middle + 1 } else { high = middle }
            }
            return low
        }
        let lower = lowerBound(from)
        return lower..<max(lower, lowerBound(to + 1))
    }
}
