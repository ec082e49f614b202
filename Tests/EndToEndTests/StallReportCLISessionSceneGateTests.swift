import Foundation
import StallReportKit
import StallReportKitTestSupport
import Testing

@Suite("stallreport summarize --group-by scene, gate --max-fatal")
struct StallReportCLISessionSceneGateTests {
    let directory: ReportDirectory
    let reports: URL

    init() throws { (directory, reports) = try DemoScenario.newDirectory() }

    /// checkout: spin 300 + lock 1500 (fatal); feed: spin 400, 500; no scene: sleep 450.
    func sceneReports() throws -> URL {
        let scenes = try directory.subdirectory("scenes")
        let items: [(String, StallReport)] = [
            ("a.json", SessionCLIFixtures.report(DemoScenario.spinSymbols, 300, minute: 0, scene: "checkout")),
            (
                "b.json",
                SessionCLIFixtures.report(DemoScenario.lockSymbols, 1_500, minute: 1, scene: "checkout", status: .fatal)
            ),
            ("c.json", SessionCLIFixtures.report(DemoScenario.spinSymbols, 400, minute: 2, scene: "feed")),
            ("d.json", SessionCLIFixtures.report(DemoScenario.spinSymbols, 500, minute: 3, scene: "feed")),
            ("e.json", SessionCLIFixtures.report(DemoScenario.sleepSymbols, 450, minute: 4)),
        ]
        for (name, report) in items { try ReportFixtures.write(report, to: scenes, name: name) }
        try SessionCLIFixtures.writeSession(
            SessionCLIFixtures.sessionText(pid: 4242, minutes: 30, stalls: 5), pid: 4242, to: scenes)
        return scenes
    }

    @Test(
        "Text: one row per scene with count, fatal, distinct fingerprints, rates; stalls without a scene in '(no scene)'"
    )
    func sceneText() throws {
        let run = try StallReportCLI.run(["summarize", "--wide", "--group-by", "scene", try sceneReports().path])
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr.isEmpty, "\(run)")
        let lines = run.stdoutLines
        #expect(lines[0] == "5 stalls, 3 distinct (by fingerprint) in 3 scenes, total stall time 3.15 s")
        let header = try #require(lines.first { $0.hasPrefix("#  SCENE") })
        #expect(header.contains("COUNT  FPS   TOTAL  STALLS/H    TIME/H"), "\(run)")
        let rows = lines.filter { $0.first?.isNumber == true && $0.contains("/h") }
        #expect(rows.count == 3)
        #expect(rows[0].hasPrefix("1  checkout    2 (1 fatal)    2  1.80 s    4.00/h  3.60 s/h"), "\(run)")
        #expect(rows[1].hasPrefix("2  feed                  2    1  900 ms    4.00/h  1.80 s/h"), "\(run)")
        #expect(rows[2].hasPrefix("3  (no scene)            1    1  450 ms    2.00/h  900 ms/h"), "\(run)")
        #expect(lines.contains("#1 checkout — longest stall: \(DemoScenario.lock)"))
    }

    @Test("JSON and Markdown by scene")
    func sceneJSONAndMarkdown() throws {
        let scenes = try sceneReports()
        let run = try StallReportCLI.run(["summarize", "--group-by", "scene", "--format", "json", scenes.path])
        #expect(run.status == 0, "\(run)")
        let object = try #require(try run.jsonObject())
        #expect(object["groupBy"] as? String == "scene")
        let groups = try #require(object["scenes"] as? [[String: Any]])
        #expect(groups.map { $0["scene"] as? String } == ["checkout", "feed", nil])
        #expect(groups.map { $0["count"] as? Int } == [2, 2, 1])
        #expect(groups.map { ($0["statuses"] as? [String: Int])?["fatal"] } == [1, 0, 0])
        #expect(groups.map { $0["stallsPerHour"] as? Double } == [4, 4, 2])
        #expect(groups[0]["worstFingerprint"] as? String == DemoScenario.lock)

        let markdown = try StallReportCLI.run(["summarize", "--group-by", "scene", "--format", "markdown", scenes.path])
        #expect(
            markdown.stdout.contains("| 1 | checkout | 2 (1 fatal) | 2 | 1.80 s | 4.00/h | 3.60 s/h |"), "\(markdown)")
        #expect(markdown.stdout.contains("| 3 | (no scene) | 1 | 1 | 450 ms |"), "\(markdown)")

        let top = try StallReportCLI.run(["summarize", "--group-by", "scene", "--top", "1", scenes.path])
        #expect(top.stdout.contains("… and 2 more scenes (raise --top to see them)"), "\(top)")
        let bad = try StallReportCLI.run(["summarize", "--group-by", "screen", scenes.path])
        #expect(bad.status == 2)
    }

    @Test("Fatal stalls are counted per group and overall in every format")
    func fatalVisible() throws {
        let text = try StallReportCLI.run(["summarize", reports.path])
        #expect(text.stdoutLines[1] == "status: 7 ended, 1 in progress, 1 fatal")
        #expect(text.stdoutLines.contains { $0.hasPrefix("2  \(DemoScenario.lock)") && $0.contains("2 (1 fatal)") })
        let markdown = try StallReportCLI.run(["summarize", "--format", "markdown", reports.path])
        #expect(markdown.stdout.contains("(7 ended, 1 in progress, 1 fatal)"))
        #expect(markdown.stdout.contains("| 2 | `\(DemoScenario.lock)` | 2 (1 fatal) |"))
    }

    @Test(
        "gate --max-fatal: passes at the limit (exit 0), fails above it (exit 1) naming the fingerprint; config key maxFatalStalls"
    )
    func maxFatal() throws {
        let pass = try StallReportCLI.run(["gate", "--max-fatal", "1", reports.path])
        #expect(pass.status == 0, "\(pass)")
        #expect(pass.stdout.contains("  PASS fatal stalls: 1 ≤ 1  (--max-fatal)"), "\(pass)")
        #expect(pass.stdoutLines.contains("Verdict: PASSED (1 budget checked)"))

        let fail = try StallReportCLI.run(["gate", "--max-fatal", "0", reports.path])
        #expect(fail.status == 1, "\(fail)")
        #expect(fail.stdout.contains("  FAIL fatal stalls: 1 > 0  (--max-fatal)"), "\(fail)")
        let budgetLine = try #require(fail.stdoutLines.firstIndex { $0.contains("FAIL fatal stalls") })
        let named = fail.stdoutLines[(budgetLine + 1)...].prefix { $0.hasPrefix("       ") }.map {
            String($0.split(separator: " ")[0])
        }
        #expect(named == [DemoScenario.lock], "only fingerprints with fatal stalls are offenders")
        #expect(fail.stdout.contains("Verdict: FAILED — 1 budget violated (maxFatalStalls)"))

        let config = directory.url.appendingPathComponent("gate.json")
        try Data(#"{"maxFatalStalls": 0}"#.utf8).write(to: config)
        let fromConfig = try StallReportCLI.run(["gate", "--config", config.path, reports.path])
        #expect(fromConfig.status == 1, "\(fromConfig)")
        #expect(fromConfig.stdout.contains("FAIL fatal stalls: 1 > 0"))
        let overridden = try StallReportCLI.run(["gate", "--config", config.path, "--max-fatal", "2", reports.path])
        #expect(overridden.status == 0, "\(overridden)")

        let junit = directory.url.appendingPathComponent("gate.xml")
        _ = try StallReportCLI.run(["gate", "--max-fatal", "0", "--junit", junit.path, reports.path])
        #expect(try String(contentsOf: junit, encoding: .utf8).contains("maxFatalStalls ≤ 0"))
        let negative = try StallReportCLI.run(["gate", "--max-fatal", "-1", reports.path])
        #expect(negative.status == 2)
    }

    @Test("--help documents --max-fatal, maxFatalStalls, --group-by and session records, within 80 columns")
    func help() throws {
        let gate = try StallReportCLI.run(["gate", "--help"])
        #expect(gate.stdout.contains("--max-fatal N             fatal stalls             maxFatalStalls"))
        #expect(gate.stdout.contains("--max-fatal <n>"))
        let summarize = try StallReportCLI.run(["summarize", "--help"])
        #expect(summarize.stdout.contains("--group-by <fingerprint|scene|loop>"))
        #expect(summarize.stdout.contains("STALL RATE"))
        #expect(summarize.stdout.contains("Reports/stall-session.schema.json"))
        for run in [gate, summarize] {
            // usage is not wrapped
            for line in run.stdoutLines where !line.hasPrefix("USAGE:") { #expect(line.count <= 80, "'\(line)'") }
        }
    }
}
