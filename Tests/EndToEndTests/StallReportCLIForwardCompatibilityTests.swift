import Foundation
import StallReportKit
import Testing

/// A report written by a newer monitor: values this version does not know (a classification, a
/// loop kind, a sample kind, a status) and keys it has never heard of. `stallreport` must count
/// it like any other stall, not skip it as bad input.
@Suite("stallreport: reports of a newer writer still count")
struct StallReportCLIForwardCompatibilityTests {
    let directory: ReportDirectory
    let reports: URL
    let newer: URL

    init() throws {
        directory = try ReportDirectory()
        reports = try DemoScenario.write(to: directory, only: ["r01-spin.json", "r05-lock.json"])
        // The lock report as a newer writer would write it.
        var object = try #require(
            try JSONSerialization.jsonObject(with: try DemoScenario.reports[4].1.encoded()) as? [String: Any])
        object["classification"] = "deadlock"
        object["status"] = "suspended"
        object["fingerprint"] = "f00dfacef00dface"
        object["causality"] = ["blockedOn": "thread 4242", "confidence": 0.9]
        var loop = try #require(object["loop"] as? [String: Any])
        loop["kind"] = "mainActor"
        loop["executor"] = "MainActor"
        object["loop"] = loop
        var samples = try #require(object["samples"] as? [[String: Any]])
        samples[0]["kind"] = "asyncStack"
        samples[0]["taskID"] = 17
        object["samples"] = samples
        newer = reports.appendingPathComponent("r10-newer.json")
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]).write(to: newer)
    }

    @Test("summarize counts it with its own classification and says nothing on stderr")
    func summarize() throws {
        let summary = try StallReportCLI.jsonSummary(of: reports.path)
        let totals = try #require(summary["totals"] as? [String: Any])
        #expect(totals["stalls"] as? Int == 3)
        #expect(totals["reportsRead"] as? Int == 3)
        let groups = try #require(summary["fingerprints"] as? [[String: Any]])
        let newerGroup = try #require(groups.first { $0["fingerprint"] as? String == "f00dfacef00dface" })
        let classifications = try #require(newerGroup["classifications"] as? [String: Int])
        #expect(classifications["deadlock"] == 1)
        #expect(classifications["cpu"] == 0, "known classifications are still listed")
        #expect((newerGroup["statuses"] as? [String: Int])?["suspended"] == 1)

        let text = try StallReportCLI.run(["summarize", reports.path])
        #expect(text.status == 0 && text.stderr.isEmpty, "\(text)")
        #expect(text.stdout.contains("deadlock 1"), "\(text.stdout)")

        let byLoop = try StallReportCLI.run(["summarize", "--group-by", "loop", reports.path])
        #expect(byLoop.status == 0, "\(byLoop)")
        #expect(byLoop.stdout.contains("mainActor"), "\(byLoop.stdout)")
    }

    @Test("gate counts it against the budgets")
    func gate() throws {
        let passing = try StallReportCLI.run(["gate", "--max-stalls", "3", reports.path])
        #expect(passing.status == 0, "\(passing)")
        let failing = try StallReportCLI.run(["gate", "--max-stalls", "2", reports.path])
        #expect(failing.status == 1, "three stalls, not two: \(failing)")
    }

    @Test("show and export read it; a sample of an unknown kind counts as one without a stack")
    func showAndExport() throws {
        let show = try StallReportCLI.run(["show", newer.path])
        #expect(show.status == 0, "\(show)")
        #expect(show.stdout.contains("deadlock"), "\(show.stdout)")

        let folded = try StallReportCLI.run(["export", "--format", "folded", newer.path, "-o", "-"])
        #expect(folded.status == 0 && folded.stderr.isEmpty, "\(folded)")
        #expect(folded.stdout.contains("[no stack]"), "the asyncStack sample: \(folded.stdout)")
    }
}
