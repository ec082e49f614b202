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
        for (part, target, goal) in [("3a", 20, 20.0), ("3b", 100, nil), ("3c", 200, 100.0)] as [(String, Int, Double?)] {
            let depth = max(0, target - baseFrames)
            var pauses: [Double] = []
            var frames: [Double] = []
            var unmatched = 0
            var samples = 0
            var baselineGaps: [Double] = []
            var baselineSeconds = 0.0
            for _ in 0..<repetitions {
                let run = try monitoredRun(context, depth: depth, spin: spin, recorder: recorder)
                pauses += run.pauses
                frames += run.frames
                unmatched += run.unmatched
                samples += run.samples
                recorder.reset()
                MainLoop.run(steps: [.init(gap: 0.02) {
                    _ = Workloads.recurse(depth) { recorder.spin(until: CStallClock.now() + UInt64(spin * 1e9), floor: floor) }
                }])
                baselineGaps += recorder.gaps.map { Double($0.length) }
                baselineSeconds += spin
            }
            let median = Stats.median(pauses)
            let p99 = Stats.percentile(pauses, 99)
            let stackFrames = Stats.median(frames)
            let baselineRate = Double(baselineGaps.count) / baselineSeconds
            let value = "median \(Format.micro(median)), p99 \(Format.micro(p99)) at \(Int(stackFrames)) frames (\(pauses.count) samples)"
            let method = "\(repetitions)× \(spin) s clock-reading spin \(depth) recursions deep on the main RunLoop, threshold 250 ms, 10 ms interval; gap > 2 µs starting within −0.3…+3 ms of a sample's send time; without the monitor the same spin sees \(Format.fixed(baselineRate, 0)) gaps/s > 2 µs (median \(Format.micro(Stats.median(baselineGaps))))"
            let data: [String: Double] = [
                "medianNanoseconds": median, "p99Nanoseconds": p99, "frames": stackFrames, "samples": Double(samples),
                "matched": Double(pauses.count), "unmatched": Double(unmatched), "baselineGapsPerSecond": baselineRate,
                "baselineGapMedianNanoseconds": Stats.median(baselineGaps), "baselineGapP99Nanoseconds": Stats.percentile(baselineGaps, 99),
            ]
            let name = "Pause per sample, ~\(target) frames"
            if let goal {
                rows.append(.judged(part, name, value: value, goal: "median ≤ \(Int(goal)) µs", ok: median <= goal * 1_000 && !pauses.isEmpty, method: method, data: data))
            } else {
                rows.append(ResultRow(part, name, value: value, goal: "stated", verdict: .info, method: method, data: data))
            }
            if unmatched > 0 { notes.append("~\(target) frames: \(unmatched) of \(samples) samples had no gap > 2 µs near their send time (the pause was shorter, or the clock loop was between reads)") }
        }
        return FigureResult(figure: .samplePause, rows: rows, notes: notes)
    }

    /// One monitored stall: the thread spins `spin` s at `depth` recursions; returns the pauses
    /// matched to the report's stack samples.
    static func monitoredRun(_ context: BenchContext, depth: Int, spin: Double, recorder: GapRecorder) throws -> Run {
        recorder.reset()
        let session = try MonitorSession(context)
        let start = Box<UInt64>(0)
        MainLoop.run(steps: [.init(gap: 0.02) {
            start.value = CStallClock.now()
            _ = Workloads.recurse(depth) { recorder.spin(until: start.value + UInt64(spin * 1e9), floor: floor) }
        }])
        session.stop()
        guard let report = session.arrivals.last?.report else { throw BenchError("no report for a \(spin) s stall") }
        let gaps = recorder.gaps
        var pauses: [Double] = []
        var frames: [Double] = []
        var unmatched = 0
        let stackSamples = report.samples.filter { $0.kind == .stack }
        for sample in stackSamples {
            frames.append(Double(sample.frames.count))
            // The span opened a few µs before the callout began; the window allows for that.
            let sent = Int64(start.value) + Int64(sample.offsetMs * 1e6)
            let match = gaps.first { gap in
                let begin = Int64(gap.start)
                return begin >= sent - 300_000 && begin <= sent + 3_000_000
            }
            if let match { pauses.append(Double(match.length)) } else { unmatched += 1 }
        }
        return Run(pauses: pauses, frames: frames, unmatched: unmatched, samples: stackSamples.count)
    }
}
