import Foundation
import StallReportKitTestSupport
import Testing

@Suite("stallreport summarize")
struct StallReportCLISummarizeTests {
    let directory: ReportDirectory
    let reports: URL

    init() throws { (directory, reports) = try DemoScenario.newDirectory() }

    @Test("Text: totals, an aligned table sorted by total stall time, stacks, examples and a histogram")
    func text() throws {
        let run = try StallReportCLI.run(["summarize", "--wide", reports.path])
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr.isEmpty)
        #expect(!run.stdout.contains("\u{1B}["), "no colour when stdout is not a terminal")
        let lines = run.stdoutLines
        #expect(lines[0] == "9 stalls, 4 distinct (by fingerprint), total stall time 6.51 s")
        #expect(lines[1] == "status: 7 ended, 1 in progress, 1 fatal")
        #expect(lines[2] == "read: 9 reports from 9 files")
        #expect(
            lines[3].hasPrefix(
                "worst: 1.50 s \(DemoScenario.lock) blocked, fatal, started 2026-03-01 12:05:00Z, \(reports.path)/r06-lock.json"
            ))
        let header = try #require(lines.firstIndex { $0.hasPrefix("#  FINGERPRINT") })
        let rows = Array(lines[(header + 1)...(header + 4)])
        #expect(
            rows.map { $0.split(separator: " ")[1] }
                == [DemoScenario.spin, DemoScenario.lock, DemoScenario.sleep, DemoScenario.recursion].map {
                    Substring($0)
                })
        // spin: 300, 600, 900, 1200 → p50 600 (rank 2), p95 = p99 = max = 1200 (rank 4)
        #expect(rows[0].contains("4  3.00 s  600 ms  1.20 s  1.20 s  1.20 s  cpu 4"))
        #expect(rows[1].contains("2 (1 fatal)  2.00 s  500 ms  1.50 s  1.50 s  1.50 s  blocked 2"))
        #expect(rows[0].contains("2026-03-01 12:00:00Z  2026-03-01 12:03:00Z  StallDemo.spinCPU(milliseconds:)"))
        // Columns line up: every row has its TOTAL value ending in the same column as the header.
        let totalEnd = lines[header].range(of: "TOTAL")!.upperBound.utf16Offset(in: lines[header])
        for row in rows {
            #expect(row.utf16.count > totalEnd && row[row.index(row.startIndex, offsetBy: totalEnd - 1)] == "s")
        }
        #expect(
            run.stdout.contains(
                "#1 \(DemoScenario.spin)\n    at StallDemo.spinCPU(milliseconds:) (/work/app/Sources/App/Stalls.swift:40)\n    at StallDemo.Stalls.cpuSpin() (/work/app/Sources/App/Stalls.swift:47)\n    example: \(reports.path)/r04-spin.json"
            ))
        #expect(
            run.stdout.contains("    at StallDemo.waitOnMutex() (/work/app/Sources/App/Stalls.swift:40)"),
            "app frames first, system leaf left out")
        #expect(
            run.stdout.contains(
                "Durations\n  250 ms–500 ms  ██████████████████████████████ 3\n  500 ms–1 s     ████████████████████████████████████████ 4\n  1 s–2 s        ████████████████████ 2\n"
            ))
    }

    @Test("JSON: stable keys and exact numbers")
    func json() throws {
        let object = try StallReportCLI.jsonSummary(of: reports.path)
        #expect(object["formatVersion"] as? Int == 1)
        #expect(object["kind"] as? String == "summary")
        let totals = try #require(object["totals"] as? [String: Any])
        #expect(totals["stalls"] as? Int == 9)
        #expect(totals["fingerprints"] as? Int == 4)
        #expect(totals["totalMs"] as? Double == 6_510)
        #expect(totals["fatal"] as? Int == 1)
        #expect(totals["inProgress"] as? Int == 1)
        let worst = try #require(object["worst"] as? [String: Any])
        #expect(worst["fingerprint"] as? String == DemoScenario.lock)
        #expect(worst["status"] as? String == "fatal")
        let groups = try #require(object["fingerprints"] as? [[String: Any]])
        #expect(
            groups.map { $0["fingerprint"] as? String } == [
                DemoScenario.spin, DemoScenario.lock, DemoScenario.sleep, DemoScenario.recursion,
            ])
        let spin = groups[0]
        #expect(spin["count"] as? Int == 4)
        #expect(spin["p50Ms"] as? Double == 600)
        #expect(spin["p95Ms"] as? Double == 1_200)
        #expect(spin["p99Ms"] as? Double == 1_200)
        #expect(spin["firstSeen"] as? String == "2026-03-01T12:00:00.000Z")
        #expect(spin["lastSeen"] as? String == "2026-03-01T12:03:00.000Z")
        #expect((spin["classifications"] as? [String: Int]) == ["cpu": 4, "blocked": 0, "mixed": 0, "congestion": 0])
        let stack = try #require(spin["stack"] as? [[String: Any]])
        #expect(stack.first?["symbol"] as? String == "StallDemo.spinCPU(milliseconds:)")
        #expect(stack.first?["line"] as? Int == 40)
        #expect(spin["exampleReport"] as? String == reports.path + "/r04-spin.json")
        #expect(groups[2]["syscall"] as? String == "nanosleep")
        let histogram = try #require(object["histogram"] as? [[String: Any]])
        #expect(histogram.map { $0["count"] as? Int } == [0, 0, 3, 4, 2, 0, 0, 0])
    }

    @Test("Markdown: a table, stacks and the duration distribution")
    func markdown() throws {
        let run = try StallReportCLI.run(["summarize", "--format", "markdown", reports.path])
        #expect(run.status == 0, "\(run)")
        #expect(
            run.stdout.hasPrefix(
                "## Stall summary\n\n**9 stalls** in 4 distinct fingerprints, total stall time **6.51 s** (7 ended, 1 in progress, 1 fatal)."
            ))
        #expect(
            run.stdout.contains(
                "| 1 | `\(DemoScenario.spin)` | 4 | 3.00 s | 600 ms | 1.20 s | 1.20 s | 1.20 s | cpu 4 | `StallDemo.spinCPU(milliseconds:)` |"
            ))
        #expect(run.stdout.contains("| 2 | `\(DemoScenario.lock)` | 2 (1 fatal) |"))
        #expect(run.stdout.contains("### Stacks"))
        #expect(run.stdout.contains("- `StallDemo.waitOnMutex()` `/work/app/Sources/App/Stalls.swift:40`"))
        #expect(run.stdout.contains("| 500 ms–1 s | 4 |"))
        #expect(!run.stdout.contains("\u{1B}["))
    }

    @Test("--top N keeps the heaviest fingerprints and says how many more there are")
    func top() throws {
        let text = try StallReportCLI.run(["summarize", "--top", "1", reports.path])
        #expect(text.status == 0)
        #expect(text.stdout.contains("… and 3 more fingerprints (raise --top to see them)"))
        #expect(!text.stdout.contains(DemoScenario.lock + "  "))
        let json = try StallReportCLI.run(["summarize", "--top", "2", "--format", "json", reports.path])
        let object = try #require(try json.jsonObject())
        #expect((object["fingerprints"] as? [Any])?.count == 2)
        #expect(object["omittedFingerprints"] as? Int == 2)
    }

    @Test("--since, --until and --min-duration select stalls; the rest are counted as left out")
    func filters() throws {
        let window = try StallReportCLI.run([
            "summarize", "--since", "2026-03-01T12:02:00Z", "--until", "2026-03-01T12:06:00Z", reports.path,
        ])
        #expect(window.status == 0, "\(window)")
        #expect(window.stdoutLines[0] == "4 stalls, 2 distinct (by fingerprint), total stall time 4.10 s")
        #expect(window.stdoutLines[2] == "read: 9 reports from 9 files, 5 left out by filters")
        let long = try StallReportCLI.run(["summarize", "--min-duration", "700", "--format", "json", reports.path])
        let object = try #require(try long.jsonObject())
        #expect((object["totals"] as? [String: Any])?["stalls"] as? Int == 4)
        #expect((object["filters"] as? [String: Any])?["minDurationMs"] as? Double == 700)
        let none = try StallReportCLI.run(["summarize", "--since", "2027-01-01", reports.path])
        #expect(none.status == 0)
        #expect(none.stdout.contains("0 stalls") && none.stdout.contains("No stalls."))
    }

    @Test("Colour only when asked or on a terminal, never with NO_COLOR")
    func colour() throws {
        let always = try StallReportCLI.run(["summarize", "--color", "always", reports.path])
        #expect(always.stdout.contains("\u{1B}[1m"))
        #expect(always.stdout.contains("\u{1B}[31m"), "fatal stalls in red")
        let noColor = try StallReportCLI.run(
            ["summarize", "--color", "always", reports.path], environment: ["NO_COLOR": "1"])
        #expect(!noColor.stdout.contains("\u{1B}["))
        let auto = try StallReportCLI.run(["summarize", reports.path])
        #expect(!auto.stdout.contains("\u{1B}["))
    }

    @Test("Files and directories can be mixed; the same file reached twice counts once")
    func mixedPaths() throws {
        let link = directory.url.appendingPathComponent("again")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: reports)
        let run = try StallReportCLI.run([
            "summarize", reports.path, link.path, reports.appendingPathComponent("r01-spin.json").path,
        ])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdoutLines[0].hasPrefix("9 stalls"))
        #expect(run.stderr.isEmpty)
    }

    @Test("Two thousand reports are read in parallel and all counted")
    func many() throws {
        let many = try directory.subdirectory("many")
        let base = DemoScenario.reports.map(\.1)
        for index in 0..<2_000 {
            var report = base[index % base.count]
            report.id = UUID().uuidString
            report.durationMs = 250 + Double(index % 1_000)
            try ReportFixtures.write(
                report, to: try directory.subdirectory("many/\(index % 10)"), name: "r\(index).json")
        }
        let run = try StallReportCLI.run(["summarize", "--format", "json", "--jobs", "4", many.path])
        #expect(run.status == 0, "\(run)")
        let object = try #require(try run.jsonObject())
        let totals = try #require(object["totals"] as? [String: Any])
        #expect(totals["stalls"] as? Int == 2_000)
        #expect(totals["fingerprints"] as? Int == 4)
        let expectedTotal = (0..<2_000).reduce(0.0) { $0 + 250 + Double($1 % 1_000) }
        #expect(totals["totalMs"] as? Double == expectedTotal)
    }
}
