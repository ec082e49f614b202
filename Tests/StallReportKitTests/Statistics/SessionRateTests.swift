import Foundation
import StallReportKitTestSupport
import Testing

@testable import StallReportKit

@Suite("Stall rates from session records")
struct SessionRateTests {
    /// Two cleanly stopped 30-minute sessions and six stalls (4 s in total, one fatal).
    static func summary(top: Int? = nil) -> Summary {
        let sessions = [
            SessionFixtures.session(pid: 4242, minutes: 30, stalls: 3),
            SessionFixtures.session(pid: 4243, minutes: 30, offsetMinutes: 30, stalls: 3, dropped: ["reportWrite": 1]),
        ]
        return Summary(collection: SessionFixtures.collection(SessionFixtures.sixStalls, sessions: sessions), top: top)
    }

    @Test("2 sessions of 30 min and 6 stalls of 4 s in total: 6 stalls and 4 s of stall time per monitored hour")
    func exactRates() throws {
        let summary = Self.summary()
        let rates = try #require(summary.rates)
        #expect(rates.monitoredHours == 1)
        #expect(rates.stallsPerHour == 6)
        #expect(rates.stallMsPerHour == 4_000)
        #expect(rates.fatalPerHour == 1)
        #expect(abs(rates.stalledFraction - 4_000.0 / 3_600_000) < 1e-12)
        let sessions = try #require(summary.sessions)
        #expect(sessions.sessions == 2)
        #expect(sessions.cleanlyStopped == 2)
        #expect(sessions.endedUncleanly == 0)
        #expect(sessions.stallsRecorded == 6)
        #expect(sessions.reportsDropped == ["reportWrite": 1])
        #expect(summary.stallsWithoutSession == 0)
        // Per group: lock 3 stalls (2.8 s), spin 3 stalls (1.2 s) over the same hour.
        let lock = try #require(summary.groups.first)
        #expect(lock.fingerprint == "lock")
        #expect(summary.rates(of: lock)?.stallsPerHour == 3)
        #expect(summary.rates(of: lock)?.stallMsPerHour == 2_800)
    }

    @Test("Sessions without a clean stop count last heartbeat minus start, and are counted as ended uncleanly")
    func uncleanSessions() throws {
        let sessions = [
            SessionFixtures.session(pid: 4242, minutes: 15, clean: false),
            SessionFixtures.session(pid: 4243, minutes: 45, offsetMinutes: 20),
        ]
        let summary = Summary(collection: SessionFixtures.collection(SessionFixtures.sixStalls, sessions: sessions))
        #expect(summary.sessions?.endedUncleanly == 1)
        #expect(summary.sessions?.cleanlyStopped == 1)
        #expect(summary.sessions?.uncleanPaths == ["/reports/session-0.session"])
        #expect(summary.rates?.monitoredHours == 1)
        #expect(summary.rates?.stallsPerHour == 6)
        let text = SummaryTextRenderer().render(summary)
        // Wrapped to fit 120 columns.
        #expect(
            text.contains(
                "sessions: 2, 1.00 h monitored, 0 stalls detected by the monitors; 1 stopped cleanly,\n  1 ended without a clean stop (crashed or killed)\n"
            ), "\(text)")
        #expect(text.contains("  ended without a clean stop: /reports/session-0.session\n"))
    }

    @Test("A session of a process that still runs is 'running', not crashed")
    func running() {
        var totals = SessionTotals()
        totals.add(
            SessionFixtures.session(pid: 1, minutes: 10, clean: false), path: "a.session", isRunning: { _ in true })
        #expect(totals.running == 1)
        #expect(totals.endedUncleanly == 0)
        #expect(totals.uncleanPaths.isEmpty)
        #expect(totals.monitoredMs == 600_000)
    }

    @Test("Stalls of processes without a session record are counted apart")
    func withoutSession() {
        let sessions = [SessionFixtures.session(pid: 4242, minutes: 60)]
        let summary = Summary(collection: SessionFixtures.collection(SessionFixtures.sixStalls, sessions: sessions))
        #expect(summary.stallsWithoutSession == 3)  // pid 4243 has no record
        #expect(
            SummaryTextRenderer().render(summary).contains(
                "note: 3 stalls came from processes without a session record"))
        // Before its process's session started (beyond the clock slack): not covered either.
        let late = [
            SessionFixtures.session(pid: 4242, minutes: 60, offsetMinutes: 2.5),
            SessionFixtures.session(pid: 4243, minutes: 60),
        ]
        #expect(
            Summary(collection: SessionFixtures.collection(SessionFixtures.sixStalls, sessions: late))
                .stallsWithoutSession == 2)
    }

    @Test("--since/--until: only the part of each session inside the window is monitored time")
    func timeWindow() throws {
        let sessions = [
            SessionFixtures.session(pid: 4242, minutes: 30),
            SessionFixtures.session(pid: 4243, minutes: 30, offsetMinutes: 30),
            SessionFixtures.session(pid: 9, minutes: 10, offsetMinutes: 120),
        ]
        let filter = RecordFilter(
            since: SessionFixtures.start.addingTimeInterval(15 * 60),
            until: SessionFixtures.start.addingTimeInterval(45 * 60))
        let summary = Summary(
            collection: SessionFixtures.collection(SessionFixtures.sixStalls, sessions: sessions, filter: filter),
            filter: filter)
        let sessionTotals = try #require(summary.sessions)
        #expect(sessionTotals.sessions == 2)
        #expect(sessionTotals.filteredOut == 1)
        #expect(sessionTotals.monitoredMs == 1_800_000)
        #expect(summary.totals.stalls == 3)  // the lock stalls at minutes 31–33
        #expect(summary.rates?.stallsPerHour == 6)
    }

    @Test("No session records: no rates, no sessions key, no session lines")
    func noSessions() throws {
        let summary = Summary(collection: ReportFixtures.collection(SessionFixtures.sixStalls))
        #expect(summary.sessions == nil)
        #expect(summary.rates == nil)
        #expect(!SummaryTextRenderer().render(summary).contains("stall rate"))
        #expect(!SummaryMarkdownRenderer().render(summary).contains("Stall rate"))
        let object = try #require(
            try JSONSerialization.jsonObject(with: SummaryJSON(summary).encoded()) as? [String: Any])
        #expect(object["sessions"] == nil)
        #expect((object["fingerprints"] as? [[String: Any]])?.first?["stallsPerHour"] == nil)
    }

    @Test("Text and Markdown show the rates overall and per group, the sessions and the dropped reports")
    func renderers() {
        let summary = Self.summary()
        let text = SummaryTextRenderer().render(summary)
        #expect(
            text.contains(
                "stall rate: 6.00 stalls and 4.00 s of stall time per monitored hour (0.11 % of monitored time); 1.00 fatal per hour\n"
            ), "\(text)")
        #expect(
            text.contains(
                "sessions: 2, 1.00 h monitored, 6 stalls detected by the monitors; 2 stopped cleanly,\n  0 ended without a clean stop (crashed or killed)\n"
            ))
        #expect(text.contains("reports dropped: 1 (reportWrite 1)\n"))
        #expect(text.contains("STALLS/H") && !text.contains("TIME/H"), "the compact table has the stall rate only")
        let lockRow = text.split(separator: "\n").first { $0.hasPrefix("1  lock") }
        #expect(lockRow?.contains("3 (1 fatal)") == true, "\(text)")
        #expect(lockRow?.contains("3.00/h") == true, "\(text)")
        let wide = SummaryTextRenderer(wide: true).render(summary)
        #expect(
            wide.contains(
                "sessions: 2, 1.00 h monitored, 6 stalls detected by the monitors; 2 stopped cleanly, 0 ended without a clean stop (crashed or killed)\n"
            ))
        #expect(
            wide.split(separator: "\n").first { $0.hasPrefix("1  lock") }?.contains("3.00/h  2.80 s/h") == true,
            "\(wide)")

        let markdown = SummaryMarkdownRenderer().render(summary)
        #expect(
            markdown.contains(
                "**Stall rate: 6.00 stalls and 4.00 s of stall time per monitored hour** (0.11 % of monitored time; 1.00 fatal per hour)."
            ), "\(markdown)")
        #expect(markdown.contains("| Ended without a clean stop (crashed or killed) | 0 |"))
        #expect(markdown.contains("| Reports dropped | 1 (reportWrite 1) |"))
        #expect(markdown.contains("| # | Fingerprint | Count | Total | Stalls/h | Time/h | p50 |"))
        #expect(markdown.contains("| 1 | `lock` | 3 (1 fatal) | 2.80 s | 3.00/h | 2.80 s/h |"), "\(markdown)")
    }

    @Test("JSON: a sessions object with stable keys, per-fingerprint rates, and the schema describes them")
    func json() throws {
        let data = try SummaryJSON(Self.summary()).encoded()
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let sessions = try #require(object["sessions"] as? [String: Any])
        #expect(
            Set(sessions.keys) == [
                "sessions", "cleanlyStopped", "endedUncleanly", "running", "filteredOut", "monitoredMs",
                "monitoredHours",
                "stallsPerHour", "stallMsPerHour", "fatalPerHour", "stalledFraction", "stallsRecorded", "spans",
                "reportsWritten", "reportsDropped", "reportsDroppedTotal", "stallsWithoutSession", "firstStartedAt",
                "lastEndedAt", "uncleanSessions",
            ])
        #expect(sessions["stallsPerHour"] as? Double == 6)
        #expect(sessions["stallMsPerHour"] as? Double == 4_000)
        #expect(sessions["monitoredHours"] as? Double == 1)
        #expect(sessions["endedUncleanly"] as? Int == 0)
        #expect(sessions["reportsDropped"] as? [String: Int] == ["reportWrite": 1])
        #expect(sessions["firstStartedAt"] as? String == "2026-03-01T12:00:00.000Z")
        #expect(sessions["lastEndedAt"] as? String == "2026-03-01T13:00:00.000Z")
        let first = try #require((object["fingerprints"] as? [[String: Any]])?.first)
        #expect(first["stallsPerHour"] as? Double == 3)
        #expect(first["stallMsPerHour"] as? Double == 2_800)
        #expect((first["statuses"] as? [String: Int])?["fatal"] == 1)
        #expect((object["totals"] as? [String: Any])?["fatal"] as? Int == 1)

        let root = PackageRoot.url
        let schema = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: root.appendingPathComponent("Reports/stallreport-summary.schema.json")))
                as? [String: Any])
        let definitions = try #require(schema["$defs"] as? [String: Any])
        let sessionsSchema = try #require(definitions["sessions"] as? [String: Any])
        #expect(Set((sessionsSchema["properties"] as? [String: Any])?.keys.map { $0 } ?? []) == Set(sessions.keys))
        #expect(Set(sessionsSchema["required"] as? [String] ?? []).isSubset(of: Set(sessions.keys)))
        let fingerprintSchema = try #require(
            (definitions["fingerprint"] as? [String: Any])?["properties"] as? [String: Any])
        #expect(Set(first.keys).isSubset(of: Set(fingerprintSchema.keys)))
    }

    @Test("Sessions but no stalls: a rate of 0 per hour")
    func noStalls() throws {
        let summary = Summary(
            collection: SessionFixtures.collection([], sessions: [SessionFixtures.session(pid: 1, minutes: 120)]))
        #expect(summary.rates?.stallsPerHour == 0)
        #expect(summary.rates?.monitoredHours == 2)
        #expect(
            SummaryTextRenderer().render(summary).contains(
                "stall rate: 0.00 stalls and 0 ms of stall time per monitored hour"))
    }

    @Test("Rate-limited compact reports count exactly like full ones")
    func rateLimited() throws {
        let records = [
            SessionFixtures.record("spin", 300, minute: 1),
            SessionFixtures.record("spin", 400, minute: 2, rateLimited: true),
            SessionFixtures.record("spin", 500, minute: 3, rateLimited: true),
        ]
        let summary = Summary(
            collection: SessionFixtures.collection(records, sessions: [SessionFixtures.session(pid: 4242, minutes: 60)])
        )
        #expect(summary.totals.stalls == 3)
        #expect(summary.totals.rateLimited == 2)
        #expect(summary.groups.first?.count == 3)
        #expect(summary.groups.first?.totalMs == 1_200)
        #expect(summary.rates?.stallsPerHour == 3)
        #expect(
            SummaryTextRenderer().render(summary).contains("read: 3 reports from 0 files (2 compact, rate-limited)"))
        let object = try #require(
            try JSONSerialization.jsonObject(with: SummaryJSON(summary).encoded()) as? [String: Any])
        #expect((object["totals"] as? [String: Any])?["rateLimited"] as? Int == 2)
    }

    @Test("Totals merged from workers equal totals folded in one go")
    func merge() {
        let records = (0..<6).map {
            SessionFixtures.session(
                pid: $0, minutes: Double($0 + 1), clean: $0 % 2 == 0, stalls: $0, dropped: ["q": $0])
        }
        var whole = SessionTotals()
        for (index, record) in records.enumerated() {
            whole.add(record, path: "/s/\(index)", isRunning: { _ in false })
        }
        var left = SessionTotals()
        var right = SessionTotals()
        for (index, record) in records.enumerated() {
            if index % 2 == 0 {
                right.add(record, path: "/s/\(index)", isRunning: { _ in false })
            } else {
                left.add(record, path: "/s/\(index)", isRunning: { _ in false })
            }
        }
        left.merge(right)
        #expect(left == whole)
        #expect(whole.endedUncleanly == 3)
        #expect(whole.reportsDroppedTotal == 15)
    }
}
