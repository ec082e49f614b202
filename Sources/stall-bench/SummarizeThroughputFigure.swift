import Foundation

/// Figure 8: `stallreport summarize --format json` over 10,000 and 100,000 generated reports of
/// realistic size (copies of real stall-demo reports), against a `jq` pipeline computing the
/// same per-fingerprint count, total and max, in the same run, from a warm page cache.
enum SummarizeThroughputFigure {
    /// The jq side: per fingerprint count, total and max, streaming over every file.
    static let jqProgram = "reduce inputs as $r ({}; .[$r.fingerprint] |= {count: ((.count // 0) + 1), totalMs: ((.totalMs // 0) + $r.durationMs), maxMs: ([(.maxMs // 0), $r.durationMs] | max)})"

    struct Timing {
        var seconds: [Double] = []
        var peakRSS: [Double] = []
    }

    static func run(_ context: BenchContext) throws -> FigureResult {
        let stallreport = try context.binary("stallreport").path
        let demo = try context.binary("stall-demo").path
        let templates = context.freshDirectory("demo-reports")
        log("   running stall-demo for real reports …")
        let demoRun = try Subprocess.run(demo, ["--output", templates.path, "--threshold-ms", "250"], scratch: context.scratch)
        guard demoRun.status == 0 else { throw BenchError("stall-demo failed: \(demoRun.stderr)") }
        let generator = try ReportGenerator(templatesIn: templates, fingerprintCount: 200)
        let sizes = context.pick([10_000, 100_000], quick: [300, 1_000])
        var rows: [ResultRow] = []
        var notes: [String] = []
        var peaks: [Int: Double] = [:]
        var jqSecondsPerReport: Double?
        for (index, size) in sizes.enumerated() {
            let directory = context.freshDirectory("generated-\(size)")
            log("   generating \(size) reports …")
            let bytes = Double(try generator.write(count: size, into: directory, seed: UInt64(size)))
            let summaryFile = context.scratch.appendingPathComponent("summary-\(size).json")
            let jqFile = context.scratch.appendingPathComponent("jq-\(size).json")
            let summarize = [stallreport, "summarize", "--format", "json", directory.path]
            let jqScript = "find '\(directory.path)' -name '*.json' -type f -print0 | xargs -0 cat | jq -n -c '\(jqProgram)'"
            var ours = Timing()
            var theirs = Timing()
            // The files were just written: they are in the page cache for both tools.
            let runs = index == 0 ? context.pick(3, quick: 1) : 1
            // jq over the large set only when it fits the time budget (estimated from the small set).
            let runJQ = index == 0 || (jqSecondsPerReport.map { $0 * Double(size) <= 60 } ?? false)
            let jqRuns = index == 0 ? runs : 1
            for repetition in 0..<runs {
                let order = repetition % 2 == 0 ? [true, false] : [false, true]
                for isOurs in order {
                    if isOurs {
                        let run = try Subprocess.run(stallreport, Array(summarize.dropFirst()), scratch: context.scratch, timed: true, stdoutFile: summaryFile)
                        guard run.status == 0 else { throw BenchError("stallreport summarize failed (\(run.status)): \(run.stderr.prefix(500))") }
                        ours.seconds.append(run.seconds)
                        ours.peakRSS.append(run.peakRSS)
                    } else if runJQ && repetition < jqRuns {
                        let run = try Subprocess.shell(jqScript, scratch: context.scratch, stdoutFile: jqFile)
                        guard run.status == 0 else { throw BenchError("jq pipeline failed (\(run.status)): \(run.stderr.prefix(500))") }
                        theirs.seconds.append(run.seconds)
                        theirs.peakRSS.append(run.peakRSS)
                    }
                }
            }
            let oursSeconds = Stats.median(ours.seconds)
            let oursPeak = Stats.median(ours.peakRSS)
            peaks[size] = oursPeak
            let perSecond = Double(size) / oursSeconds
            let megabytes = bytes / 1_048_576 / oursSeconds
            let agreement = try compare(summary: summaryFile, jq: runJQ ? jqFile : nil)
            if let problem = agreement { notes.append("\(size) reports: \(problem)") }
            let part = "8\(["a", "b", "c"][index])"
            let label = "\(Format.count(Double(size))) reports (\(Format.fixed(bytes / 1_048_576, 0)) MiB, \(Format.fixed(bytes / Double(size) / 1_024, 1)) KiB each)"
            var data: [String: Double] = [
                "reports": Double(size), "bytes": bytes, "stallreportSeconds": oursSeconds, "reportsPerSecond": perSecond,
                "megabytesPerSecond": megabytes, "stallreportPeakRSSBytes": oursPeak,
            ]
            let oursText = "\(Format.count(perSecond)) reports/s, \(Format.fixed(megabytes, 0)) MB/s, \(Format.fixed(oursSeconds, 2)) s, peak RSS \(Format.mib(oursPeak))"
            if runJQ, !theirs.seconds.isEmpty {
                let jqSeconds = Stats.median(theirs.seconds)
                jqSecondsPerReport = jqSeconds / Double(size)
                let ratio = jqSeconds / oursSeconds
                data["jqSeconds"] = jqSeconds
                data["jqPeakRSSBytes"] = Stats.median(theirs.peakRSS)
                data["speedupOverJQ"] = ratio
                rows.append(.judged(part, "summarize vs jq: \(label)", value: "\(Format.fixed(ratio, 1))× faster than jq (\(oursText); jq \(Format.fixed(jqSeconds, 2)) s, peak RSS \(Format.mib(Stats.median(theirs.peakRSS))))",
                                    goal: "≥ 10× faster than jq", ok: ratio >= 10, method: "median of \(ours.seconds.count) stallreport and \(theirs.seconds.count) jq runs, alternating, files in the page cache (just written); wall time and /usr/bin/time -v max RSS; jq: find | xargs cat | jq -n 'reduce inputs …' (count, total, max per fingerprint)", data: data))
            } else {
                let estimate = (jqSecondsPerReport ?? 0) * Double(size)
                notes.append("jq was not run on \(Format.count(Double(size))) reports: estimated \(Int(estimate)) s from the \(Format.count(Double(sizes[0]))) run, over the time budget; the ratio is measured at \(Format.count(Double(sizes[0])))")
                rows.append(ResultRow(part, "summarize throughput: \(label)", value: oursText, goal: "stated (jq not run: see notes)", verdict: .info,
                                      method: "\(ours.seconds.count) run(s), files in the page cache (just written); wall time and /usr/bin/time -v max RSS", data: data))
            }
            try? FileManager.default.removeItem(at: directory)
        }
        if sizes.count == 2, let small = peaks[sizes[0]], let large = peaks[sizes[1]], small > 0 {
            let growth = large / small
            rows.append(.judged("8c", "summarize peak RSS, \(Format.count(Double(sizes[1]))) vs \(Format.count(Double(sizes[0]))) reports",
                                value: "\(Format.mib(large)) vs \(Format.mib(small)) (× \(Format.fixed(growth, 2)) for × \(sizes[1] / sizes[0]) reports)",
                                goal: "not growing with the number of reports (≤ × 1.25)", ok: growth <= 1.25,
                                method: "/usr/bin/time -v maximum resident set size of stallreport summarize, medians", data: ["growth": growth]))
        }
        return FigureResult(figure: .summarizeThroughput, rows: rows, notes: notes)
    }

    /// Checks that stallreport and jq agree on count, total and max per fingerprint; nil when they do.
    private static func compare(summary: URL, jq: URL?) throws -> String? {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: summary)) as? [String: Any]
        let groups = (object?["fingerprints"] as? [[String: Any]]) ?? []
        guard !groups.isEmpty else { return "stallreport summary has no fingerprints" }
        guard let jq else { return nil }
        let theirs = (try JSONSerialization.jsonObject(with: Data(contentsOf: jq)) as? [String: [String: Double]]) ?? [:]
        var mismatches = 0
        for group in groups {
            guard let fingerprint = group["fingerprint"] as? String, let other = theirs[fingerprint] else { mismatches += 1; continue }
            let count = (group["count"] as? NSNumber)?.doubleValue ?? -1
            let total = (group["totalMs"] as? NSNumber)?.doubleValue ?? -1
            let max = (group["maxMs"] as? NSNumber)?.doubleValue ?? -1
            if count != other["count"] || abs(total - (other["totalMs"] ?? 0)) > 0.01 * Swift.max(1, total) || abs(max - (other["maxMs"] ?? 0)) > 0.001 {
                mismatches += 1
            }
        }
        if groups.count != theirs.count { return "stallreport found \(groups.count) fingerprints, jq \(theirs.count)" }
        return mismatches == 0 ? nil : "\(mismatches) fingerprints differ between stallreport and jq"
    }
}
