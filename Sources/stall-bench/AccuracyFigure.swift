import Foundation

/// Figure 6: reported durations against the stalling code's own measurement, and no report for
/// spans just below the threshold.
enum AccuracyFigure {
    static func run(_ context: BenchContext) throws -> FigureResult {
        let series = try StallSeries.run(context)
        let errors = zip(series.stalls, series.reports).map { $1.report.durationMs - $0.measuredMs }
        let absolute = errors.map(abs)
        let p99 = Stats.percentile(absolute, 99)
        let missing = series.stalls.count - series.reports.count
        var notes: [String] = []
        if missing != 0 { notes.append("\(series.stalls.count) stalls gave \(series.reports.count) reports") }
        let signed =
            "signed error median \(Format.milli(Stats.median(errors), 3)), min \(Format.milli(errors.min() ?? 0, 3)), max \(Format.milli(errors.max() ?? 0, 3))"
        return FigureResult(
            figure: .accuracy,
            rows: [
                .judged(
                    "6a", "Reported duration − measured duration",
                    value:
                        "|error| p99 \(Format.milli(p99, 3)) (\(signed); \(series.reports.count) of \(series.stalls.count) stalls reported)",
                    goal: "|error| p99 ≤ 2 ms, every stall reported", ok: !absolute.isEmpty && p99 <= 2 && missing == 0,
                    method:
                        "report.durationMs vs the stalling code's own clock from entering to leaving its timer callout; \(series.stalls.count) stalls of 260 ms–2 s (CPU spin, usleep, semaphore wait in turn)",
                    data: [
                        "absP99Ms": p99, "absMedianMs": Stats.median(absolute), "absMaxMs": absolute.max() ?? 0,
                        "signedMedianMs": Stats.median(errors), "stalls": Double(series.stalls.count),
                        "reports": Double(series.reports.count),
                    ]),
                .judged(
                    "6b", "Reports for spans of 0.9 × threshold",
                    value:
                        "\(series.shortSpanReports) reports for \(series.shortSpans) spans (\(series.shortSpansDiscarded) tracked and discarded)",
                    goal: "0 reports", ok: series.shortSpanReports == 0,
                    method:
                        "\(series.shortSpans) CPU spins of \(Int(series.thresholdMs * 0.9)) ms in main-loop timers, same monitor",
                    data: [
                        "spans": Double(series.shortSpans), "reports": Double(series.shortSpanReports),
                        "discarded": Double(series.shortSpansDiscarded),
                    ]),
            ], notes: notes)
    }
}
