import Foundation

/// Figure 8: `stallreport summarize --format json` over 10,000 and 100,000 generated reports of
/// realistic size (copies of real stall-demo reports), against two baselines computing only the
/// per-fingerprint count, total and max, in the same run, from a warm page cache: a ten-line
/// Python script using orjson (what a user would write instead) and a `jq` pipeline.
enum SummarizeThroughputFigure {
    /// The jq side: per fingerprint count, total and max, streaming over every file.
    static let jqProgram =
        "reduce inputs as $r ({}; .[$r.fingerprint] |= {count: ((.count // 0) + 1), totalMs: ((.totalMs // 0) + $r.durationMs), maxMs: ([(.maxMs // 0), $r.durationMs] | max)})"

    /// The script baseline: the same aggregation in Python with orjson (output shaped like jq's).
    static let pythonScript = """
        import os, sys, orjson
        groups = {}
        for root, dirs, files in os.walk(sys.argv[1]):
            for name in files:
                if name.endswith(".json"):
                    with open(os.path.join(root, name), "rb") as f: r = orjson.loads(f.read())
                    g = groups.setdefault(r["fingerprint"], [0, 0.0, 0.0])
                    g[0] += 1; g[1] += r["durationMs"]; g[2] = max(g[2], r["durationMs"])
        sys.stdout.buffer.write(orjson.dumps({k: {"count": c, "totalMs": t, "maxMs": m} for k, (c, t, m) in groups.items()}))
        """

    struct Timing {
        var seconds: [Double] = []
        var cpuSeconds: [Double] = []
        var peakRSS: [Double] = []

        mutating func add(_ run: Subprocess.Run) {
            seconds.append(run.seconds)
            cpuSeconds.append(run.cpuSeconds)
            peakRSS.append(run.peakRSS)
        }

        var wall: Double { Stats.median(seconds) }
        var cpu: Double { Stats.median(cpuSeconds) }
        var peak: Double { Stats.median(peakRSS) }
        var text: String {
            "\(Format.fixed(wall, 2)) s wall, \(Format.fixed(cpu, 2)) s CPU, peak RSS \(Format.mib(peak))"
        }
    }

    enum Tool: CaseIterable { case ours, script, jq }

    /// Python 3 with orjson, installed with pip when missing; nil (with the reason) when unavailable.
    static func python() -> (path: String?, problem: String?) {
        let check = "import orjson"
        if (try? Subprocess.run(
            "/usr/bin/env", ["python3", "-c", check], scratch: FileManager.default.temporaryDirectory))?.status == 0
        {
            return ("/usr/bin/env", nil)
        }
        log("   installing orjson for the Python baseline (python3 -m pip install orjson) …")
        _ = try? Subprocess.run(
            "/usr/bin/env", ["python3", "-m", "pip", "install", "--quiet", "orjson"],
            scratch: FileManager.default.temporaryDirectory)
        if (try? Subprocess.run(
            "/usr/bin/env", ["python3", "-c", check], scratch: FileManager.default.temporaryDirectory))?.status == 0
        {
            return ("/usr/bin/env", nil)
        }
        return (
            nil, "the Python baseline was skipped: python3 with orjson is not available (python3 -m pip install orjson)"
        )
    }

    static func run(_ context: BenchContext) throws -> FigureResult {
        let stallreport = try context.binary("stallreport").path
        let demo = try context.binary("stall-demo").path
        let templates = context.freshDirectory("demo-reports")
        log("   running stall-demo for real reports …")
        let demoRun = try Subprocess.run(
            demo, ["--output", templates.path, "--threshold-ms", "250"], scratch: context.scratch)
        guard demoRun.status == 0 else { throw BenchError("stall-demo failed: \(demoRun.stderr)") }
        let generator = try ReportGenerator(templatesIn: templates, fingerprintCount: 200)
        let sizes = context.pick([10_000, 100_000], quick: [300, 1_000])
        let scriptFile = context.scratch.appendingPathComponent("summarize-baseline.py")
        try Data(pythonScript.utf8).write(to: scriptFile)
        let (python, pythonProblem) = Self.python()
        var rows: [ResultRow] = []
        var notes: [String] = pythonProblem.map { [$0] } ?? []
        var peaks: [Int: Double] = [:]
        var jqSecondsPerReport: Double?
        let letters = ["a", "b", "c", "d"]
        for (index, size) in sizes.enumerated() {
            let directory = context.freshDirectory("generated-\(size)")
            log("   generating \(size) reports …")
            let bytes = Double(try generator.write(count: size, into: directory, seed: UInt64(size)))
            let outputs: [Tool: URL] = [
                .ours: context.scratch.appendingPathComponent("summary-\(size).json"),
                .script: context.scratch.appendingPathComponent("script-\(size).json"),
                .jq: context.scratch.appendingPathComponent("jq-\(size).json"),
            ]
            let jqScript =
                "find '\(directory.path)' -name '*.json' -type f -print0 | xargs -0 cat | jq -n -c '\(jqProgram)'"
            var timings: [Tool: Timing] = [:]
            // The files were just written: they are in the page cache for every tool.
            let rounds = context.pick(3, quick: 1)
            // jq over the large set only when it fits the time budget (estimated from the small set); once there.
            let runJQ = index == 0 || (jqSecondsPerReport.map { $0 * Double(size) <= 240 } ?? false)
            for round in 0..<rounds {
                // Rotate the order, so that no tool always runs first (or right after another).
                let order = (0..<3).map { Tool.allCases[($0 + round) % 3] }
                for tool in order {
                    let run: Subprocess.Run
                    switch tool {
                    case .ours:
                        run = try Subprocess.run(
                            stallreport, ["summarize", "--format", "json", directory.path], scratch: context.scratch,
                            timed: true, stdoutFile: outputs[.ours])
                    case .script:
                        guard let python else { continue }
                        run = try Subprocess.run(
                            python, ["python3", scriptFile.path, directory.path], scratch: context.scratch,
                            timed: true, stdoutFile: outputs[.script])
                    case .jq:
                        guard runJQ, index == 0 || round == 0 else { continue }
                        run = try Subprocess.shell(jqScript, scratch: context.scratch, stdoutFile: outputs[.jq]!)
                    }
                    guard run.status == 0 else {
                        throw BenchError("\(tool) failed (\(run.status)): \(run.stderr.prefix(500))")
                    }
                    timings[tool, default: Timing()].add(run)
                }
            }
            let ours = timings[.ours]!
            peaks[size] = ours.peak
            let perSecond = Double(size) / ours.wall
            let megabytes = bytes / 1_048_576 / ours.wall
            for tool in [Tool.script, .jq] where timings[tool] != nil {
                if let problem = try compare(summary: outputs[.ours]!, other: outputs[tool]!) {
                    notes.append("\(size) reports: \(tool == .jq ? "jq" : "the Python script"): \(problem)")
                }
            }
            let label =
                "\(Format.count(Double(size))) reports (\(Format.fixed(bytes / 1_048_576, 0)) MiB, \(Format.fixed(bytes / Double(size) / 1_024, 1)) KiB each)"
            var data: [String: Double] = [
                "reports": Double(size), "bytes": bytes, "stallreportSeconds": ours.wall,
                "stallreportCPUSeconds": ours.cpu,
                "reportsPerSecond": perSecond, "megabytesPerSecond": megabytes, "stallreportPeakRSSBytes": ours.peak,
            ]
            let oursText =
                "stallreport \(ours.text); \(Format.count(perSecond)) reports/s, \(Format.fixed(megabytes, 0)) MB/s"
            let method =
                "median of \(ours.seconds.count) rounds, order of the tools rotated each round, files in the page cache (just written); wall time; CPU = user + system from /usr/bin/time -v (wait4 rusage of the child and its children); max RSS from the same"
            if let script = timings[.script] {
                let wallRatio = script.wall / ours.wall
                let cpuRatio = script.cpu / ours.cpu
                data["scriptSeconds"] = script.wall
                data["scriptCPUSeconds"] = script.cpu
                data["scriptPeakRSSBytes"] = script.peak
                data["speedupOverScript"] = wallRatio
                data["cpuSpeedupOverScript"] = cpuRatio
                rows.append(
                    .judged(
                        "8\(letters[index * 2])", "summarize vs a Python orjson script: \(label)",
                        value:
                            "\(Format.fixed(wallRatio, 2))× faster in wall time, \(Format.fixed(cpuRatio, 2))× in CPU time (\(oursText); script \(script.text))",
                        goal: "faster than the script in wall and CPU time (> 1×)", ok: wallRatio > 1 && cpuRatio > 1,
                        method: method
                            + "; script: os.walk, orjson.loads of each file, count/total/max per fingerprint",
                        data: data))
            } else {
                rows.append(
                    ResultRow(
                        "8\(letters[index * 2])", "summarize vs a Python orjson script: \(label)", value: oursText,
                        goal: "faster than the script (not run: see notes)", verdict: .info, method: method, data: data)
                )
            }
            if let jq = timings[.jq] {
                jqSecondsPerReport = jq.wall / Double(size)
                let ratio = jq.wall / ours.wall
                let jqData: [String: Double] = [
                    "jqSeconds": jq.wall, "jqCPUSeconds": jq.cpu, "jqPeakRSSBytes": jq.peak, "speedupOverJQ": ratio,
                ]
                rows.append(
                    .judged(
                        "8\(letters[index * 2 + 1])", "summarize vs jq: \(label)",
                        value:
                            "\(Format.fixed(ratio, 1))× faster than jq in wall time (jq \(jq.text), \(jq.seconds.count) run(s))",
                        goal: "≥ 10× faster than jq", ok: ratio >= 10,
                        method: method
                            + "; jq: find | xargs cat | jq -n 'reduce inputs …' (count, total, max per fingerprint)",
                        data: jqData))
            } else {
                let estimate = (jqSecondsPerReport ?? 0) * Double(size)
                notes.append(
                    "jq was not run on \(Format.count(Double(size))) reports: estimated \(Int(estimate)) s from the \(Format.count(Double(sizes[0]))) run, over the time budget"
                )
            }
            try? FileManager.default.removeItem(at: directory)
        }
        if sizes.count == 2, let small = peaks[sizes[0]], let large = peaks[sizes[1]], small > 0 {
            let growth = large / small
            rows.append(
                .judged(
                    "8e",
                    "summarize peak RSS, \(Format.count(Double(sizes[1]))) vs \(Format.count(Double(sizes[0]))) reports",
                    value:
                        "\(Format.mib(large)) vs \(Format.mib(small)) (× \(Format.fixed(growth, 2)) for × \(sizes[1] / sizes[0]) reports)",
                    goal: "not growing with the number of reports (≤ × 1.25)", ok: growth <= 1.25,
                    method: "/usr/bin/time -v maximum resident set size of stallreport summarize, medians",
                    data: ["growth": growth]))
        }
        return FigureResult(figure: .summarizeThroughput, rows: rows, notes: notes)
    }

    /// Checks that stallreport and a baseline agree on count, total and max per fingerprint; nil when they do.
    private static func compare(summary: URL, other: URL) throws -> String? {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: summary)) as? [String: Any]
        let groups = (object?["fingerprints"] as? [[String: Any]]) ?? []
        guard !groups.isEmpty else { return "stallreport summary has no fingerprints" }
        let theirs =
            (try JSONSerialization.jsonObject(with: Data(contentsOf: other)) as? [String: [String: Double]]) ?? [:]
        var mismatches = 0
        for group in groups {
            guard let fingerprint = group["fingerprint"] as? String, let other = theirs[fingerprint] else {
                mismatches += 1
                continue
            }
            let count = (group["count"] as? NSNumber)?.doubleValue ?? -1
            let total = (group["totalMs"] as? NSNumber)?.doubleValue ?? -1
            let max = (group["maxMs"] as? NSNumber)?.doubleValue ?? -1
            if count != other["count"] || abs(total - (other["totalMs"] ?? 0)) > 0.01 * Swift.max(1, total)
                || abs(max - (other["maxMs"] ?? 0)) > 0.001
            {
                mismatches += 1
            }
        }
        if groups.count != theirs.count {
            return "stallreport found \(groups.count) fingerprints, the baseline \(theirs.count)"
        }
        return mismatches == 0 ? nil : "\(mismatches) fingerprints differ from stallreport's"
    }
}
