import Foundation
import StallReportKit
import Testing

/// `stallreport show` and `stallreport export` run as a subprocess on the real demo's reports.
@Suite("stallreport show and export end to end", .serialized)
struct StallReportVizShowExportTests {
    @Test("show prints the facts, the representative stack and the call tree; colour only when allowed")
    func show() throws {
        let demo = try VizDemo.run()
        let (path, report) = try demo.report(naming: "spinOnCPU")
        let run = try StallReportCLI.run(["show", path])
        #expect(run.status == 0, "\(run)")
        #expect(!run.stdout.contains("\u{1B}["), "colour without a terminal")
        #expect(run.stdout.contains("fingerprint     \(report.fingerprint)"))
        #expect(run.stdout.contains("\(report.sampling.taken) taken of \(report.sampling.attempted) attempted"))
        #expect(run.stdout.contains("Representative stack (leaf first):"))
        let stackLines = run.stdoutLines.drop { !$0.hasPrefix("Representative stack") }.dropFirst().prefix {
            !$0.isEmpty
        }
        #expect(stackLines.count == report.representativeStack.count)
        #expect(stackLines.first?.hasPrefix("  0  ") == true)
        #expect(stackLines.contains { $0.contains("spinOnCPU") && $0.contains("stall-demo") })
        #expect(run.stdout.contains("Call tree of all \(report.samples.count) samples"))
        // Top-level lines (name right after the count) cover every sample once. Usually that is
        // one `_start` root at 100 %, but a sample whose unwinding stopped early (a frame without
        // unwind info, e.g. inside a sanitizer runtime) is a root of its own.
        let countWidth = String(report.samples.count).count
        let roots = run.stdoutLines.compactMap { line -> (percent: Double, count: Int)? in
            let prefix = 2 + 6 + 1 + countWidth + 2
            guard line.count > prefix, line.hasPrefix("  "), line.dropFirst(prefix).first != " ",
                let match = line.firstMatch(of: /^ +(\d+\.\d)% +(\d+)  \S/),
                let percent = Double(match.1), let count = Int(match.2)
            else { return nil }
            return (percent, count)
        }
        #expect(!roots.isEmpty)
        #expect(roots.map(\.count).reduce(0, +) <= report.samples.count)
        #expect(
            run.stdout.contains("not shown") || roots.map(\.count).reduce(0, +) == report.samples.count, "\(run.stdout)"
        )
        #expect(roots.allSatisfy { abs($0.percent - Double($0.count) / Double(report.samples.count) * 100) < 0.051 })
        #expect(
            run.stdoutLines.contains {
                $0.range(of: #"^\s+\d+\.\d% +\d+ +.*spinOnCPU"#, options: .regularExpression) != nil
            })

        let colored = try StallReportCLI.run(["show", "--color", "always", path])
        #expect(colored.stdout.contains("\u{1B}[1m\u{1B}[36mstatic Scenarios.spinOnCPU(milliseconds:)"))
        let noColor = try StallReportCLI.run(["show", "--color", "always", path], environment: ["NO_COLOR": "1"])
        #expect(!noColor.stdout.contains("\u{1B}["))
    }

    @Test("show on a broken file says what is wrong and exits 2")
    func showBroken() throws {
        let directory = try ReportDirectory()
        let file = try directory.file("broken.json", "{\"schemaVersion\": 1, ")
        let run = try StallReportCLI.run(["show", file.path])
        #expect(run.status == 2)
        #expect(run.stderr.contains("\(file.path): invalid JSON"))
    }

    @Test("folded: every line is 'stack count', counts add up to the sampled time in µs")
    func folded() throws {
        let demo = try VizDemo.run()
        let run = try StallReportCLI.run(["export", "--format", "folded", demo.directory.path, "-o", "-"])
        #expect(run.status == 0, "\(run)")
        let lines = run.stdoutLines
        #expect(!lines.isEmpty)
        var total = 0
        for line in lines {
            let match = line.range(of: #"^[^;\n]+(;[^;\n]+)* [0-9]+$"#, options: .regularExpression)
            #expect(match != nil, "not a folded line: \(line)")
            total += Int(line.split(separator: " ").last!) ?? 0
        }
        #expect(
            abs(Double(total) - demo.sampledMs * 1000) <= Double(lines.count), "\(total) µs vs \(demo.sampledMs) ms")
        #expect(lines.contains { $0.hasPrefix("_start;") && $0.contains("spinOnCPU") })
        // The usleep stall is unwound now: its sleeping samples reach the demo function through usleep.
        #expect(
            lines.contains {
                $0.hasPrefix("_start;") && $0.contains("sleepWithUsleep") && $0.contains("clock_nanosleep")
            })
    }

    @Test("speedscope: schema, sampled profile, samples.length == weights.length, indices in range, weights add up")
    func speedscope() throws {
        let demo = try VizDemo.run()
        let directory = try ReportDirectory()
        let output = directory.url.appendingPathComponent("stalls.speedscope.json")
        let run = try StallReportCLI.run(["export", "--format", "speedscope", demo.directory.path, "-o", output.path])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("wrote speedscope export of \(demo.reports.count) stalls"))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: output)) as? [String: Any])
        #expect(json["$schema"] as? String == "https://www.speedscope.app/file-format-schema.json")
        let frames = try #require((json["shared"] as? [String: Any])?["frames"] as? [[String: Any]])
        let profile = try #require((json["profiles"] as? [[String: Any]])?.first)
        #expect(profile["type"] as? String == "sampled")
        let samples = try #require(profile["samples"] as? [[Int]])
        let weights = try #require(profile["weights"] as? [NSNumber]).map(\.doubleValue)
        #expect(samples.count == weights.count)
        #expect(samples.allSatisfy { $0.allSatisfy { frames.indices.contains($0) } })
        #expect(abs(weights.reduce(0, +) - demo.sampledMs) < 1e-6)
        #expect(abs(((profile["endValue"] as? NSNumber)?.doubleValue ?? 0) - demo.sampledMs) < 1e-6)
        #expect(frames.contains { ($0["name"] as? String)?.contains("spinOnCPU") == true })
    }

    @Test("chrome-trace: one X event per stall with ph, ts, dur, pid, tid from its report")
    func chromeTrace() throws {
        let demo = try VizDemo.run()
        let run = try StallReportCLI.run(["export", "--format", "chrome-trace", demo.directory.path, "-o", "-"])
        #expect(run.status == 0, "\(run)")
        let json = try #require(try run.jsonObject())
        let events = try #require(json["traceEvents"] as? [[String: Any]])
        let stalls = events.filter { $0["ph"] as? String == "X" }
        #expect(stalls.count == demo.reports.count)
        for event in events {
            for key in ["ph", "ts", "pid", "tid"] { #expect(event[key] != nil, "\(key) missing: \(event)") }
        }
        for (_, report) in demo.reports {
            let event = try #require(stalls.first { ($0["args"] as? [String: Any])?["id"] as? String == report.id })
            #expect(event["pid"] as? Int == report.process.pid)
            #expect(event["tid"] as? Int == report.loop.threadID)
            #expect(event["ts"] as? Int == Int((report.startedAt.timeIntervalSince1970 * 1_000_000).rounded()))
            #expect(event["dur"] as? Int == Int((report.durationMs * 1000).rounded()))
            let args = try #require(event["args"] as? [String: Any])
            #expect(args["fingerprint"] as? String == report.fingerprint)
            #expect((args["stack"] as? [String])?.count == report.representativeStack.count)
        }
    }

    @Test("--fingerprint and --since/--until select stalls")
    func filters() throws {
        let demo = try VizDemo.run()
        let (_, spin) = try demo.report(naming: "spinOnCPU")
        let expected = demo.reports.filter { $0.report.fingerprint == spin.fingerprint }
        let run = try StallReportCLI.run([
            "export", "--format", "chrome-trace", "--fingerprint", spin.fingerprint, demo.directory.path, "-o", "-",
        ])
        #expect(run.status == 0, "\(run)")
        let json = try #require(try run.jsonObject())
        let stalls = (json["traceEvents"] as? [[String: Any]] ?? []).filter { $0["ph"] as? String == "X" }
        #expect(stalls.count == expected.count)
        #expect(stalls.allSatisfy { ($0["args"] as? [String: Any])?["fingerprint"] as? String == spin.fingerprint })

        let last = try #require(demo.reports.map(\.report.startedAt).max())
        let since = ReportCoding.formatDate(last)
        let late = try StallReportCLI.run([
            "export", "--format", "folded", "--since", since, demo.directory.path, "-o", "-",
        ])
        #expect(late.status == 0)
        let lateTotal = late.stdoutLines.reduce(0) { $0 + (Int($1.split(separator: " ").last!) ?? 0) }
        let lastReport = try #require(demo.reports.first { $0.report.startedAt == last }?.report)
        #expect(Double(lateTotal) == Double(lastReport.samples.count) * lastReport.sampling.effectiveIntervalMs * 1000)

        let none = try StallReportCLI.run([
            "export", "--format", "folded", "--until", "2000-01-01", demo.directory.path, "-o", "-",
        ])
        #expect(none.status == 0)
        #expect(none.stdout.isEmpty)
        #expect(none.stderr.contains("no stall matched the filters"))
    }

    @Test("export needs -o, a known format and at least one path (exit 2)")
    func usage() throws {
        let demo = try VizDemo.run()
        #expect(try StallReportCLI.run(["export", "--format", "folded", demo.directory.path]).status == 2)
        #expect(try StallReportCLI.run(["export", "--format", "svg", demo.directory.path, "-o", "-"]).status == 2)
        #expect(try StallReportCLI.run(["export", "--format", "folded", "-o", "-"]).status == 2)
    }
}
