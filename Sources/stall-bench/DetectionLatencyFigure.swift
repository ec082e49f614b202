import Foundation

/// Figure 5: how soon the monitor acts. From the stall series (figure 6's stalls): when the
/// first sample is taken relative to when sampling is due and to the threshold crossing, and
/// how long after the span ended its report was on disk (the `onReport` callback runs after the
/// file is written) against the end time the stalling code measured itself.
enum DetectionLatencyFigure {
    static func run(_ context: BenchContext) throws -> FigureResult {
        let series = try StallSeries.run(context)
        let lead = series.thresholdMs * series.lead
        var firstSample: [Double] = []
        var crossing: [Double] = []
        var onDisk: [Double] = []
        for (stall, arrival) in zip(series.stalls, series.reports) {
            let offsets = arrival.report.samples.map(\.offsetMs)
            if let first = offsets.first { firstSample.append(first - lead) }
            if let after = offsets.first(where: { $0 >= series.thresholdMs }) {
                crossing.append(after - series.thresholdMs)
            }
            onDisk.append(Double(Int64(arrival.at) - Int64(stall.end)) / 1e6)
        }
        let interval = series.intervalMs
        let n = series.reports.count
        let seriesNote =
            "\(n) stalls of 260 ms–2 s (CPU spin, usleep, semaphore wait), threshold \(Int(series.thresholdMs)) ms, sampling from \(Int(lead)) ms every \(Int(interval)) ms"
        var rows: [ResultRow] = [
            .judged(
                "5a", "Sampling due → first sample", value: summary(firstSample),
                goal: "p99 ≤ \(Int(interval)) ms (one interval)",
                ok: !firstSample.isEmpty && Stats.percentile(firstSample, 99) <= interval,
                method: "samples[0].offsetMs − threshold × samplingLead from the reports; \(seriesNote)",
                data: stats(firstSample)),
            .judged(
                "5b", "Threshold crossing → first sample after it", value: summary(crossing),
                goal: "p99 ≤ \(Int(interval)) ms (one interval)",
                ok: !crossing.isEmpty && Stats.percentile(crossing, 99) <= interval,
                method:
                    "first samples[].offsetMs ≥ thresholdMs, minus thresholdMs (sampling began before the crossing, so a stack exists from the start); \(seriesNote)",
                data: stats(crossing)),
            .judged(
                "5c", "Span end → report on disk", value: summary(onDisk), goal: "p99 ≤ 50 ms",
                ok: !onDisk.isEmpty && Stats.percentile(onDisk, 99) <= 50,
                method:
                    "monotonic time of the onReport callback (after the atomic write and fsync) minus the end the stalling code measured; warm (second and later reports); \(seriesNote)",
                data: stats(onDisk)),
        ]
        if let cold = series.coldReport {
            let latency = Double(Int64(cold.at) - Int64(series.coldStall.end)) / 1e6
            rows.append(
                ResultRow(
                    "5d", "Span end → first report of the process on disk (cold)", value: Format.milli(latency, 1),
                    goal: "stated",
                    verdict: .info,
                    method:
                        "as 5c for the process's first report: libdw opens the binaries and the symbol cache is empty",
                    data: ["milliseconds": latency]))
        }
        var notes: [String] = []
        if n != series.stalls.count {
            notes.append(
                "\(series.stalls.count) stalls but \(n) reports: the series is matched by order and may be off")
        }
        return FigureResult(figure: .detectionLatency, rows: rows, notes: notes)
    }

    static func summary(_ values: [Double]) -> String {
        guard !values.isEmpty else { return "no data" }
        return
            "median \(Format.milli(Stats.median(values))), p99 \(Format.milli(Stats.percentile(values, 99))), max \(Format.milli(values.max()!)) (n = \(values.count))"
    }

    static func stats(_ values: [Double]) -> [String: Double] {
        [
            "medianMs": Stats.median(values), "p99Ms": Stats.percentile(values, 99), "maxMs": values.max() ?? 0,
            "minMs": values.min() ?? 0, "count": Double(values.count),
        ]
    }
}
