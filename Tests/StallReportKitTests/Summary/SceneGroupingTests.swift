import Foundation
import StallReportKitTestSupport
import Testing

@testable import StallReportKit

@Suite("Grouping by scene")
struct SceneGroupingTests {
    /// checkout: 2 stalls (spin 300, lock 1500 fatal); feed: 3 spin stalls (400, 500, 600); no scene: 1 (700).
    static let records = [
        SessionFixtures.record("spin", 300, minute: 1, scene: "checkout"),
        SessionFixtures.record("lock", 1_500, minute: 2, scene: "checkout", status: .fatal),
        SessionFixtures.record("spin", 400, minute: 3, scene: "feed"),
        SessionFixtures.record("spin", 500, minute: 4, scene: "feed"),
        SessionFixtures.record("spin", 600, minute: 5, scene: "feed"),
        SessionFixtures.record("parse", 700, minute: 6),
        SessionFixtures.record("parse", 50, minute: 7, scene: ""),
    ]

    static func summary(sessions: [SessionRecord] = [], top: Int? = nil) -> Summary {
        Summary(collection: SessionFixtures.collection(records, sessions: sessions, grouping: .scene), top: top)
    }

    @Test(
        "One group per scene with the same numbers as fingerprint groups; no or empty scene is one '(no scene)' group")
    func groups() throws {
        let summary = Self.summary()
        #expect(summary.grouping == .scene)
        #expect(summary.groups.map(\.label) == ["checkout", "feed", "(no scene)"])
        #expect(summary.groups.map(\.fingerprint) == ["checkout", "feed", ""])
        let checkout = summary.groups[0]
        #expect(checkout.count == 2)
        #expect(checkout.totalMs == 1_800)
        #expect(checkout.distinctFingerprints == 2)
        #expect(checkout.fatalCount == 1)
        #expect(checkout.p50Ms == 300)
        #expect(checkout.maxMs == 1_500)
        #expect(checkout.worst.fingerprint == "lock")
        #expect(summary.groups[1].distinctFingerprints == 1)
        #expect(summary.groups[2].count == 2)
        #expect(summary.totals.stalls == 7)
        #expect(summary.totals.fingerprints == 3)  // distinct fingerprints, not scenes
        #expect(summary.totals.fatal == 1)
    }

    @Test("Text: a SCENE column, distinct fingerprints, fatal counts and the longest stall's fingerprint per scene")
    func text() {
        let text = SummaryTextRenderer().render(Self.summary())
        #expect(
            text.hasPrefix("7 stalls, 3 distinct (by fingerprint) in 3 scenes, total stall time 4.05 s\n"), "\(text)")
        #expect(text.contains("#  SCENE             COUNT  FPS   TOTAL     P95"), "\(text)")
        #expect(
            SummaryTextRenderer(wide: true).render(Self.summary()).contains(
                "#  SCENE             COUNT  FPS   TOTAL     P50"))
        #expect(text.contains("1  checkout    2 (1 fatal)    2  1.80 s"), "\(text)")
        #expect(text.contains("3  (no scene)            2    1"), "\(text)")
        #expect(text.contains("#1 checkout — longest stall: lock\n"))
        let top = SummaryTextRenderer().render(Self.summary(top: 1))
        #expect(top.contains("… and 2 more scenes (raise --top to see them)"))
    }

    @Test("Markdown: a Scene column and the scene names as text")
    func markdown() {
        let markdown = SummaryMarkdownRenderer().render(Self.summary())
        #expect(markdown.contains("**7 stalls** in 3 distinct fingerprints and 3 scenes"), "\(markdown)")
        #expect(markdown.contains("| # | Scene | Count | Fingerprints | Total | p50 |"))
        #expect(markdown.contains("| 1 | checkout | 2 (1 fatal) | 2 | 1.80 s |"), "\(markdown)")
        #expect(markdown.contains("| 3 | (no scene) | 2 | 1 |"))
        #expect(markdown.contains("**#1** checkout (longest stall `lock`)"))
    }

    @Test(
        "JSON: groupBy, scenes[] with the group numbers (scene absent for no scene), fingerprints[] empty; keys in the schema"
    )
    func json() throws {
        let sessions = [SessionFixtures.session(pid: 4242, minutes: 30)]
        let object = try #require(
            try JSONSerialization.jsonObject(with: SummaryJSON(Self.summary(sessions: sessions)).encoded())
                as? [String: Any])
        #expect(object["groupBy"] as? String == "scene")
        #expect((object["fingerprints"] as? [Any])?.isEmpty == true)
        #expect(object["omittedFingerprints"] as? Int == 0)
        #expect(object["omittedScenes"] as? Int == 0)
        let scenes = try #require(object["scenes"] as? [[String: Any]])
        #expect(scenes.map { $0["scene"] as? String } == ["checkout", "feed", nil])
        let checkout = scenes[0]
        #expect(
            Set(checkout.keys) == [
                "scene", "count", "fingerprints", "totalMs", "p50Ms", "p95Ms", "p99Ms", "maxMs", "firstSeen",
                "lastSeen",
                "classifications", "statuses", "worstFingerprint", "stack", "exampleReport", "stallsPerHour",
                "stallMsPerHour",
            ])
        #expect(checkout["count"] as? Int == 2)
        #expect(checkout["fingerprints"] as? Int == 2)
        #expect(checkout["worstFingerprint"] as? String == "lock")
        #expect((checkout["statuses"] as? [String: Int])?["fatal"] == 1)
        #expect(checkout["stallsPerHour"] as? Double == 4)  // 2 stalls in half an hour
        #expect(checkout["stallMsPerHour"] as? Double == 3_600)

        let root = PackageRoot.url
        let schema = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: root.appendingPathComponent("Reports/stallreport-summary.schema.json")))
                as? [String: Any])
        let sceneSchema = try #require((schema["$defs"] as? [String: Any])?["scene"] as? [String: Any])
        #expect(
            Set((sceneSchema["properties"] as? [String: Any])?.keys.map { $0 } ?? [])
                == Set(checkout.keys).union(["syscall"]))
        #expect(
            Set(sceneSchema["required"] as? [String] ?? [])
                == Set(checkout.keys).subtracting(["scene", "stallsPerHour", "stallMsPerHour"]))
        let optional = try #require(((schema["allOf"] as? [[String: Any]])?.first?["properties"]) as? [String: Any])
        let documented = Set(((schema["properties"] as? [String: Any]) ?? [:]).keys).union(optional.keys)
        #expect(Set(object.keys).isSubset(of: documented))
    }

    @Test("Grouping by fingerprint is unchanged by scenes")
    func fingerprintDefault() {
        let summary = Summary(collection: SessionFixtures.collection(Self.records, sessions: []))
        #expect(summary.grouping == .fingerprint)
        #expect(summary.groups.map(\.fingerprint) == ["spin", "lock", "parse"])  // 1.80 s, 1.50 s, 750 ms
        #expect(summary.groups.map(\.label) == ["spin", "lock", "parse"])
    }

    @Test("Reports' scene and rate-limited flag reach the record; the collector groups files by scene")
    func collector() throws {
        let directory = try ReportFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (index, scene) in ["checkout", "checkout", nil, "feed"].enumerated() {
            var report = ReportFixtures.report(appSymbols: ["App.spin()"], durationMs: 300 + Double(index) * 100)
            report.scene = scene
            if index == 1 {
                report.rateLimited = true
                report.omittedSamples = report.samples.count
                report.samples = []
            }
            try ReportFixtures.write(report, to: directory, name: "r\(index).json")
        }
        let collection = ReportCollector(workers: 2, grouping: .scene).collect([directory.path])
        #expect(collection.problems.isEmpty)
        #expect(collection.rateLimitedReports == 1)
        let stats = collection.stats()
        #expect(stats.map(\.label) == ["checkout", "feed", "(no scene)"])
        #expect(stats.map(\.count) == [2, 1, 1])
        #expect(stats[0].worst.stack.first?.symbol == "App.spin()")  // the compact report keeps its stack
    }
}
