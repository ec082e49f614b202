import Foundation
import StallReportKit
import StallReportKitTestSupport
import Testing

@Suite("stallreport with session records")
struct StallReportCLISessionTests {
    let directory: ReportDirectory
    let reports: URL

    /// Two cleanly stopped 30-minute sessions (pids 4242, 4243) and six stalls: spin 300, 400, 500
    /// of 4242; lock 600, 700 and a fatal 1500 of 4243: 4 s in total.
    init() throws {
        directory = try ReportDirectory()
        reports = try directory.subdirectory("reports")
        try SessionCLIFixtures.writeSession(
            SessionCLIFixtures.sessionText(pid: 4242, minutes: 30, stalls: 3), pid: 4242, to: reports)
        try SessionCLIFixtures.writeSession(
            SessionCLIFixtures.sessionText(
                pid: 4243, minutes: 30, offsetMinutes: 30, stalls: 3, dropped: ["deletedForQuota": 2, "reportWrite": 1]),
            pid: 4243, offsetMinutes: 30, to: reports)
        let spin = DemoScenario.spinSymbols
        let lock = DemoScenario.lockSymbols
        let stalls: [(String, StallReport)] = [
            ("r1.json", SessionCLIFixtures.report(spin, 300, minute: 1)),
            ("r2.json", SessionCLIFixtures.report(spin, 400, minute: 2)),
            ("r3.json", SessionCLIFixtures.report(spin, 500, minute: 3)),
            ("r4.json", SessionCLIFixtures.report(lock, 600, minute: 31, pid: 4243)),
            ("r5.json", SessionCLIFixtures.report(lock, 700, minute: 32, pid: 4243)),
            ("r6.json", SessionCLIFixtures.report(lock, 1_500, minute: 33, pid: 4243, status: .fatal)),
        ]
        for (name, report) in stalls { try ReportFixtures.write(report, to: reports, name: name) }
    }

    @Test("2 sessions of 30 min, 6 stalls of 4 s: 6 stalls and 4 s stall time per monitored hour, in text")
    func textRates() throws {
        let run = try StallReportCLI.run(["summarize", "--wide", reports.path])
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr.isEmpty, "\(run)")
        let lines = run.stdoutLines
        #expect(lines[0] == "6 stalls, 2 distinct (by fingerprint), total stall time 4.00 s")
        #expect(lines[1] == "status: 5 ended, 0 in progress, 1 fatal")
        #expect(
            lines.contains(
                "stall rate: 6.00 stalls and 4.00 s of stall time per monitored hour (0.11 % of monitored time); 1.00 fatal per hour"
            ), "\(run)")
        #expect(
            lines.contains(
                "sessions: 2, 1.00 h monitored, 6 stalls detected by the monitors; 2 stopped cleanly, 0 ended without a clean stop (crashed or killed)"
            ))
        #expect(lines.contains("reports dropped: 3 (deletedForQuota 2, reportWrite 1)"))
        let header = try #require(lines.first { $0.hasPrefix("#  FINGERPRINT") })
        #expect(header.contains("TOTAL  STALLS/H    TIME/H"))
        let lockRow = try #require(lines.first { $0.hasPrefix("1  \(DemoScenario.lock)") })
        #expect(lockRow.contains("3 (1 fatal)  2.80 s    3.00/h  2.80 s/h"), "\(run)")
        let spinRow = try #require(lines.first { $0.hasPrefix("2  \(DemoScenario.spin)") })
        #expect(spinRow.contains("3  1.20 s    3.00/h  1.20 s/h"), "\(run)")
    }

    @Test("JSON: the sessions object has exact rates and counts; Markdown shows the rate and the session table")
    func jsonAndMarkdown() throws {
        let object = try StallReportCLI.jsonSummary(of: reports.path)
        let sessions = try #require(object["sessions"] as? [String: Any])
        #expect(sessions["sessions"] as? Int == 2)
        #expect(sessions["monitoredMs"] as? Double == 3_600_000)
        #expect(sessions["monitoredHours"] as? Double == 1)
        #expect(sessions["stallsPerHour"] as? Double == 6)
        #expect(sessions["stallMsPerHour"] as? Double == 4_000)
        #expect(sessions["fatalPerHour"] as? Double == 1)
        #expect(sessions["endedUncleanly"] as? Int == 0)
        #expect(sessions["stallsRecorded"] as? Int == 6)
        #expect(sessions["reportsDropped"] as? [String: Int] == ["deletedForQuota": 2, "reportWrite": 1])
        #expect(sessions["reportsDroppedTotal"] as? Int == 3)
        #expect(sessions["stallsWithoutSession"] as? Int == 0)
        #expect((object["totals"] as? [String: Any])?["fatal"] as? Int == 1)
        let groups = try #require(object["fingerprints"] as? [[String: Any]])
        #expect(groups.map { $0["stallsPerHour"] as? Double } == [3, 3])
        #expect((groups[0]["statuses"] as? [String: Int])?["fatal"] == 1)

        let markdown = try StallReportCLI.run(["summarize", "--format", "markdown", reports.path])
        #expect(markdown.status == 0, "\(markdown)")
        #expect(markdown.stdout.contains("**Stall rate: 6.00 stalls and 4.00 s of stall time per monitored hour**"))
        #expect(markdown.stdout.contains("| Ended without a clean stop (crashed or killed) | 0 |"))
        #expect(markdown.stdout.contains("| Reports dropped | 3 (deletedForQuota 2, reportWrite 1) |"))
        #expect(
            markdown.stdout.contains("| 1 | `\(DemoScenario.lock)` | 3 (1 fatal) | 2.80 s | 3.00/h | 2.80 s/h |"),
            "\(markdown)")
    }

    @Test(
        "The summary JSON with sessions and with --group-by scene validates against its schema; hand-made records against theirs"
    )
    func schemas() throws {
        try ReportFixtures.write(
            SessionCLIFixtures.report(DemoScenario.sleepSymbols, 400, minute: 4, scene: "feed"), to: reports,
            name: "r7.json")
        let out = try directory.subdirectory("summaries")
        for (name, extra) in [("by-fingerprint", [String]()), ("by-scene", ["--group-by", "scene"])] {
            let run = try StallReportCLI.run(["summarize", "--format", "json"] + extra + [reports.path])
            #expect(run.status == 0, "\(run)")
            try Data(run.stdout.utf8).write(to: out.appendingPathComponent("\(name).json"))
        }
        try SchemaValidation.validate(
            schema: "stallreport-summary.schema.json", files: out.path + "/*.json", expected: 2)
        try SchemaValidation.validate(
            schema: "stall-session.schema.json", files: reports.path + "/*.session", expected: 2)
    }

    @Test("Sessions without a clean stop count last heartbeat minus start and are listed as crashed or killed")
    func uncleanSessions() throws {
        let other = try directory.subdirectory("unclean")
        try SessionCLIFixtures.writeSession(
            SessionCLIFixtures.sessionText(pid: 4242, minutes: 20, clean: false, stalls: 3), pid: 4242, to: other)
        let killed = try SessionCLIFixtures.writeSession(
            SessionCLIFixtures.sessionText(pid: 4243, minutes: 40, offsetMinutes: 30, clean: false),
            pid: 4243, offsetMinutes: 30, to: other)
        try SessionCLIFixtures.writeSession(
            SessionCLIFixtures.sessionText(pid: 4244, minutes: 60, offsetMinutes: 60), pid: 4244, offsetMinutes: 60,
            to: other)
        try ReportFixtures.write(
            SessionCLIFixtures.report(DemoScenario.spinSymbols, 500, minute: 1), to: other, name: "r1.json")
        try ReportFixtures.write(
            SessionCLIFixtures.report(DemoScenario.lockSymbols, 2_000, minute: 35, pid: 4243, status: .fatal),
            to: other, name: "r2.json")

        let run = try StallReportCLI.run(["summarize", "--wide", other.path])
        #expect(run.status == 0, "\(run)")
        #expect(
            run.stdoutLines.contains(
                "sessions: 3, 2.00 h monitored, 3 stalls detected by the monitors; 1 stopped cleanly, 2 ended without a clean stop (crashed or killed)"
            ), "\(run)")
        #expect(run.stdoutLines.contains("  ended without a clean stop: \(killed.path)"))
        #expect(
            run.stdoutLines.contains(
                "stall rate: 1.00 stalls and 1.25 s of stall time per monitored hour (0.03 % of monitored time); 0.50 fatal per hour"
            ), "\(run)")

        let json = try StallReportCLI.run(["summarize", "--format", "json", other.path])
        let sessions = try #require((try json.jsonObject())?["sessions"] as? [String: Any])
        #expect(sessions["endedUncleanly"] as? Int == 2)
        #expect(sessions["cleanlyStopped"] as? Int == 1)
        #expect(sessions["monitoredHours"] as? Double == 2)
        #expect((sessions["uncleanSessions"] as? [String])?.count == 2)
        #expect((sessions["uncleanSessions"] as? [String])?.last == killed.path)
    }

    @Test("A broken session file is one stderr line and exit 0; with --strict exit 2; the rest still counts")
    func brokenSession() throws {
        let truncated = reports.appendingPathComponent("session-20260301T130000.000Z-p4250.session")
        try Data(SessionCLIFixtures.sessionText(pid: 4250, minutes: 5).prefix(120).utf8).write(to: truncated)
        let run = try StallReportCLI.run(["summarize", reports.path])
        #expect(run.status == 0, "\(run)")
        #expect(
            run.stderrLines == [
                "stallreport: \(truncated.path): session record is not valid JSON: the document is malformed or ends early"
            ], "\(run)")
        #expect(run.stdoutLines.contains("read: 6 reports from 6 files, 1 problem (see stderr)"), "\(run)")
        #expect(run.stdoutLines.contains { $0.hasPrefix("stall rate: 6.00 stalls") })

        let strict = try StallReportCLI.run(["summarize", "--strict", reports.path])
        #expect(strict.status == 2, "\(strict)")
        #expect(strict.stderrLines.last == "stallreport: error: 1 file could not be used and --strict was given")
        #expect(strict.stdout.contains("stall rate: 6.00 stalls"), "the output is still written")

        let empty = reports.appendingPathComponent("session-empty.session")
        try Data().write(to: empty)
        let report = reports.appendingPathComponent("session-report.session")
        try ReportFixtures.write(
            SessionCLIFixtures.report(DemoScenario.spinSymbols, 300, minute: 9), to: reports,
            name: "session-report.session")
        let both = try StallReportCLI.run(["summarize", reports.path])
        #expect(both.status == 0, "\(both)")
        #expect(
            both.stderrLines.contains(
                "stallreport: \(empty.path): session record is empty (the process may have died while creating it)"),
            "\(both)")
        #expect(
            both.stderrLines.contains("stallreport: \(report.path): not a session record: no kind \"session\""),
            "\(both)")
        #expect(both.stderrLines.count == 3)
    }

    @Test("Session records but no report: the monitor ran and saw no stall: exit 0 with a rate of 0")
    func sessionsOnly() throws {
        let quiet = try directory.subdirectory("quiet")
        try SessionCLIFixtures.writeSession(SessionCLIFixtures.sessionText(pid: 7, minutes: 90), pid: 7, to: quiet)
        let run = try StallReportCLI.run(["summarize", quiet.path])
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr.isEmpty, "\(run)")
        #expect(
            run.stdoutLines.contains(
                "stall rate: 0.00 stalls and 0 ms of stall time per monitored hour (0.00 % of monitored time); 0.00 fatal per hour"
            ), "\(run)")
        #expect(run.stdout.contains("No stalls."))
        let gate = try StallReportCLI.run(["gate", "--max-stalls", "0", quiet.path])
        #expect(gate.status == 0, "\(gate)")
    }

    @Test("Rate-limited compact reports count exactly like full ones")
    func rateLimited() throws {
        let limited = try directory.subdirectory("limited")
        try SessionCLIFixtures.writeSession(
            SessionCLIFixtures.sessionText(pid: 4242, minutes: 60, stalls: 5, dropped: ["rateLimitedToSummary": 3]),
            pid: 4242, to: limited)
        for (index, ms) in [300.0, 400, 500, 600, 700].enumerated() {
            let full = SessionCLIFixtures.report(DemoScenario.spinSymbols, ms, minute: Double(index))
            try ReportFixtures.write(
                index < 2 ? full : SessionCLIFixtures.compact(full), to: limited, name: "r\(index).json")
        }
        let object = try StallReportCLI.jsonSummary(of: limited.path)
        let totals = try #require(object["totals"] as? [String: Any])
        #expect(totals["stalls"] as? Int == 5)
        #expect(totals["rateLimited"] as? Int == 3)
        #expect(totals["totalMs"] as? Double == 2_500)
        let group = try #require((object["fingerprints"] as? [[String: Any]])?.first)
        #expect(group["count"] as? Int == 5)
        #expect(group["p95Ms"] as? Double == 700)
        #expect(group["maxMs"] as? Double == 700)
        #expect(((group["stack"] as? [[String: Any]])?.first?["symbol"]) as? String == DemoScenario.spinSymbols[0])
        #expect((object["sessions"] as? [String: Any])?["stallsPerHour"] as? Double == 5)
        let text = try StallReportCLI.run(["summarize", limited.path])
        #expect(text.stdoutLines.contains("read: 5 reports from 5 files (3 compact, rate-limited)"), "\(text)")
        let gate = try StallReportCLI.run(["gate", "--max-per-fingerprint", "4", limited.path])
        #expect(gate.status == 1, "\(gate)")
        #expect(gate.stdout.contains("FAIL stalls per fingerprint: 5 > 4"))
    }
}
