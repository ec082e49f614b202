import Foundation

/// Writes a run as `latest.json` and as the Markdown table of `latest.md`.
enum ResultsWriter {
    static func json(_ run: BenchRun) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return try encoder.encode(run)
    }

    /// A run written by ``json(_:)``; an error naming the file and what is wrong with it.
    static func read(_ file: URL) throws -> BenchRun {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw BenchError("--merge: cannot read \(file.path): \(error.localizedDescription)")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        do {
            return try decoder.decode(BenchRun.self, from: data)
        } catch {
            throw BenchError("--merge: \(file.path) is not a stall-bench results file: \(error)")
        }
    }

    static func markdown(_ run: BenchRun) -> String {
        let rows = run.figures.flatMap(\.rows)
        let failed = rows.filter { $0.verdict == .fail }.count
        let judged = rows.filter { $0.verdict != .info }.count
        var text = """
            # StallMonitor benchmarks

            `Scripts/bench` (release build), \(ISO8601DateFormatter().string(from: run.startedAt)), \
            \(Int(run.seconds.rounded())) s\(run.quick ? ", **--quick (not for numbers)**" : "").

            Machine: \(run.machine.cpu), \(run.machine.cores) cores, Linux \(run.machine.kernel); \
            load average \(load(run.machine.loadBefore)) before, \(load(run.machine.loadAfter)) after\
            \(run.machine.note.map { "; \($0)" } ?? "").
            \(reruns(run))
            \(judged - failed) of \(judged) judged figures meet their goal. Machine-speed-dependent \
            figures are ratios against a baseline measured in the same run (alternating with/without \
            runs, medians); absolute times are shown for context only.

            | Figure | Measure | Value | Goal | Verdict | How measured |
            | --- | --- | --- | --- | --- | --- |

            """
        for row in rows {
            let verdict = row.verdict == .pass ? "pass" : row.verdict == .fail ? "**FAIL**" : "—"
            text +=
                "| \(row.figure) | \(cell(row.name)) | \(cell(row.value)) | \(cell(row.goal)) | \(verdict) | \(cell(row.method)) |\n"
        }
        let notes = run.figures.filter { !$0.notes.isEmpty }
        if !notes.isEmpty {
            text += "\n## Notes\n\n"
            for figure in notes {
                for note in figure.notes {
                    text += "- Figure \(figure.figure.number) (\(figure.figure.rawValue)): \(note)\n"
                }
            }
        }
        text +=
            "\n## Time per figure\n\nWith the share of CPU time the hypervisor stole meanwhile (it stops every thread at once).\n\n"
        for figure in run.figures {
            let steal = figure.cpuSteal.map { String(format: ", CPU steal %.1f %%", $0 * 100) } ?? ""
            let when = figure.measuredAt.map { ", from \(ISO8601DateFormatter().string(from: $0))" } ?? ""
            text +=
                "- \(figure.figure.number) \(figure.figure.rawValue): \(Int(figure.seconds.rounded())) s\(steal)\(when)\n"
        }
        return text
    }

    /// A paragraph per later run merged in (`--merge`): which figures, when, on what load.
    private static func reruns(_ run: BenchRun) -> String {
        (run.reruns ?? []).map { rerun in
            let numbers = rerun.figures.map { "\($0.number)" }.joined(separator: ", ")
            return
                "\nFigure\(rerun.figures.count == 1 ? "" : "s") \(numbers) \(rerun.figures.count == 1 ? "was" : "were") "
                + "run later, at \(ISO8601DateFormatter().string(from: rerun.startedAt)) (`stall-bench run --merge`; "
                + "load average \(load(rerun.machine.loadBefore)) before, \(load(rerun.machine.loadAfter)) after): "
                + "\(rerun.figures.count == 1 ? "its rows replace" : "their rows replace") any of this run's.\n"
        }.joined()
    }

    private static func load(_ values: [Double]) -> String {
        values.map { String(format: "%.2f", $0) }.joined(separator: " / ")
    }

    private static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }
}
