import Foundation
import StallReportKit

/// Figure 9: bytes per report at 10, 100 and 500 samples: real reports of CPU stalls whose
/// stacks (~40 frames) move between four leaf functions, so samples are not all alike.
enum ReportSizeFigure {
    static func run(_ context: BenchContext) throws -> FigureResult {
        let targets = context.pick([10, 100, 500], quick: [10, 100])
        // Threshold 100 ms: sampling starts at 50 ms and takes one sample every 10 ms.
        let session = try MonitorSession(context, threshold: .milliseconds(100), maxSamples: 500)
        MainLoop.run(
            steps: targets.map { samples in
                .init(gap: 0.1) { stall(milliseconds: 50 + 10 * Double(samples) - 5) }
            })
        session.stop()
        let arrivals = session.arrivals
        guard arrivals.count == targets.count else {
            throw BenchError("\(targets.count) stalls gave \(arrivals.count) reports")
        }
        var rows: [ResultRow] = []
        var sizes: [(samples: Int, bytes: Double)] = []
        for (index, arrival) in arrivals.enumerated() {
            let bytes = Double(
                (try? FileManager.default.attributesOfItem(atPath: arrival.url.path)[.size] as? Int) ?? 0)
            let report = arrival.report
            let frames = report.samples.map(\.frames.count)
            let framesPerSample = frames.isEmpty ? 0 : Double(frames.reduce(0, +)) / Double(frames.count)
            // What the samples would take if each wrote its own frames instead of indices into a shared table.
            let frameBytes = try ReportCoding.makeEncoder().encode(report.frames).count
            let unshared = Double(frameBytes) / Double(max(report.frames.count, 1)) * Double(frames.reduce(0, +))
            sizes.append((report.samples.count, bytes))
            rows.append(
                ResultRow(
                    "9\(["a", "b", "c"][index])", "Report size at \(targets[index]) samples",
                    value:
                        "\(Format.count(bytes)) bytes (\(report.samples.count) samples × \(Int(framesPerSample.rounded())) frames; \(report.frames.count) distinct frames, \(report.images.count) images; inline frames would be ~\(Format.count(unshared / 1_024)) KiB)",
                    goal: "stated; small (shared frame table)", verdict: .info,
                    method:
                        "file size of the (compact) JSON the monitor wrote for a CPU stall of \(Int(report.durationMs)) ms (threshold 100 ms, 10 ms interval, maxSamplesPerStall 500)",
                    data: [
                        "bytes": bytes, "samples": Double(report.samples.count),
                        "distinctFrames": Double(report.frames.count),
                        "images": Double(report.images.count), "framesPerSample": framesPerSample,
                        "inlineFramesBytesEstimate": unshared,
                    ]))
        }
        if let first = sizes.first, let last = sizes.last, last.samples > first.samples {
            let perSample = (last.bytes - first.bytes) / Double(last.samples - first.samples)
            rows.append(
                ResultRow(
                    "9\(["a", "b", "c", "d"][sizes.count])", "Bytes per extra sample",
                    value: "\(Format.count(perSample)) bytes",
                    goal: "stated", verdict: .info,
                    method:
                        "(size at \(last.samples) − size at \(first.samples) samples) / \(last.samples - first.samples)",
                    data: ["bytesPerSample": perSample]))
        }
        return FigureResult(figure: .reportSize, rows: rows)
    }

    /// A CPU stall about 40 frames deep that rotates between four leaf functions.
    private static func stall(milliseconds: Double) {
        let end = CStallClock.now() + UInt64(milliseconds * 1e6)
        _ = Workloads.recurse(30) {
            var turn = 0
            while CStallClock.now() < end {
                switch turn % 4 {
                case 0: Leaves.parseRecords(until: end)
                case 1: Leaves.layoutViews(until: end)
                case 2: Leaves.decodeImage(until: end)
                default: Leaves.hashBuffer(until: end)
                }
                turn += 1
            }
        }
    }
}

/// Leaf functions with app-like names, each busy for ~3 ms.
enum Leaves {
    @inline(never) static func parseRecords(until end: UInt64) {
        Workloads.spin(until: min(end, CStallClock.now() + 3_000_000))
    }
    @inline(never) static func layoutViews(until end: UInt64) {
        Workloads.spin(until: min(end, CStallClock.now() + 3_000_000))
    }
    @inline(never) static func decodeImage(until end: UInt64) {
        Workloads.spin(until: min(end, CStallClock.now() + 3_000_000))
    }
    @inline(never) static func hashBuffer(until end: UInt64) {
        Workloads.spin(until: min(end, CStallClock.now() + 3_000_000))
    }
}
