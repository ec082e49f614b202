import Foundation
import StallReportKitTestSupport
import Testing

@testable import StallReportKit

@Suite("Summaries")
struct SummaryTests {
    static let records = [
        ReportFixtures.record("spin", 300, at: 0), ReportFixtures.record("spin", 320, at: 5),
        ReportFixtures.record("spin", 340, at: 9),
        ReportFixtures.record("lock", 1_500, at: 3, status: .fatal, classification: .blocked),
        ReportFixtures.record("lock", 400, at: 4, classification: .mixed),
        ReportFixtures.record("parse", 260, at: 7, status: .inProgress),
    ]

    @Test("Groups sorted by total stall time, with totals, worst stall and status counts")
    func totals() throws {
        let summary = Summary(collection: ReportFixtures.collection(Self.records))
        #expect(summary.groups.map(\.fingerprint) == ["lock", "spin", "parse"])
        #expect(summary.totals.stalls == 6)
        #expect(summary.totals.fingerprints == 3)
        #expect(summary.totals.totalMs == 3_120)
        #expect(summary.totals.fatal == 1)
        #expect(summary.totals.inProgress == 1)
        #expect(summary.totals.ended == 4)
        #expect(summary.worst?.durationMs == 1_500)
        let lock = try #require(summary.groups.first)
        #expect(lock.classificationMix == "blocked 1, mixed 1")
        #expect(lock.p50Ms == 400)
        #expect(lock.p95Ms == 1_500)
        #expect(lock.firstSeen == Date(timeIntervalSince1970: 1_772_366_403))
        #expect(lock.lastSeen == Date(timeIntervalSince1970: 1_772_366_404))
    }

    @Test("--top keeps the heaviest groups and says how many were left out; totals still cover all")
    func top() {
        let summary = Summary(collection: ReportFixtures.collection(Self.records), top: 1)
        #expect(summary.groups.map(\.fingerprint) == ["lock"])
        #expect(summary.omittedGroups == 2)
        #expect(summary.totals.stalls == 6)
    }

    @Test("Histogram buckets are half-open: 250 goes in 250–500, 499.9 too, 500 in 500–1000")
    func histogram() {
        let histogram = DurationHistogram(durations: [99, 100, 250, 499.9, 500, 12_000])
        #expect(histogram.buckets.map(\.count) == [1, 1, 2, 1, 0, 0, 0, 1])
        #expect(histogram.trimmed.count == 8)
        #expect(histogram.buckets[2].label == "250 ms–500 ms")
        #expect(histogram.buckets.last?.label == "≥ 10 s")
        #expect(DurationHistogram(durations: []).trimmed.isEmpty)
    }

    @Test("JSON output has the documented keys")
    func jsonKeys() throws {
        let summary = Summary(collection: ReportFixtures.collection(Self.records))
        let object = try #require(
            try JSONSerialization.jsonObject(with: SummaryJSON(summary).encoded()) as? [String: Any])
        #expect(
            Set(object.keys) == [
                "formatVersion", "kind", "filters", "totals", "worst", "histogram", "fingerprints",
                "omittedFingerprints", "problems",
            ])
        let totals = try #require(object["totals"] as? [String: Any])
        #expect(
            Set(totals.keys) == [
                "files", "reportsRead", "filteredOut", "stalls", "fingerprints", "totalMs", "ended", "inProgress",
                "fatal", "problems",
            ])
        let first = try #require((object["fingerprints"] as? [[String: Any]])?.first)
        #expect(
            Set(first.keys) == [
                "fingerprint", "count", "totalMs", "p50Ms", "p95Ms", "p99Ms", "maxMs", "firstSeen", "lastSeen",
                "classifications", "statuses", "stack", "exampleReport",
            ])
        #expect((first["statuses"] as? [String: Int]) == ["ended": 1, "inProgress": 0, "fatal": 1])
        #expect(first["firstSeen"] as? String == "2026-03-01T12:00:03.000Z")

        // The documented schema requires exactly these keys.
        let root = PackageRoot.url
        let schemaData = try Data(contentsOf: root.appendingPathComponent("Reports/stallreport-summary.schema.json"))
        let schema = try #require(try JSONSerialization.jsonObject(with: schemaData) as? [String: Any])
        #expect(Set(schema["required"] as? [String] ?? []) == Set(object.keys).subtracting(["worst"]))
        let properties = try #require(schema["properties"] as? [String: Any])
        #expect(Set(properties.keys) == Set(object.keys))
        let totalsSchema = try #require(properties["totals"] as? [String: Any])
        #expect(Set(totalsSchema["required"] as? [String] ?? []) == Set(totals.keys))
        let definitions = try #require(schema["$defs"] as? [String: Any])
        let fingerprintSchema = try #require(definitions["fingerprint"] as? [String: Any])
        #expect(Set(fingerprintSchema["required"] as? [String] ?? []) == Set(first.keys))
    }

    @Test("Text output is aligned, has no escape codes when plain, and colours when asked")
    func text() {
        let summary = Summary(collection: ReportFixtures.collection(Self.records))
        let plain = SummaryTextRenderer(style: .plain).render(summary)
        #expect(!plain.contains("\u{1B}["))
        let lines = plain.split(separator: "\n", omittingEmptySubsequences: false)
        let header = lines.firstIndex { $0.hasPrefix("#  FINGERPRINT") }!
        let column = lines[header].range(of: "COUNT")!.upperBound
        let offset = lines[header].distance(from: lines[header].startIndex, to: column)
        for row in lines[(header + 1)...(header + 3)] {
            // Right-aligned COUNT column: every row's count ends in the same column.
            let end = row.index(row.startIndex, offsetBy: offset)
            #expect(row[row.index(before: end)].isNumber || row[row.index(before: end)] == ")")
        }
        #expect(SummaryTextRenderer(style: TextStyle(colors: true)).render(summary).contains("\u{1B}[31m"))
        #expect(TextStyle.automatic(isTerminal: true, environment: ["NO_COLOR": "1"]) == .plain)
        #expect(TextStyle.automatic(isTerminal: false, environment: [:]) == .plain)
        #expect(TextStyle.automatic(isTerminal: true, environment: [:]).colors)
    }

    @Test("Long demangled names are cut in table columns, not in stacks")
    func longNames() {
        let long = "static stall_demo.Scenarios.waitForLockHeldByWorker(milliseconds: Swift.Int) -> ()"
        #expect(StackFrameSummary.abbreviated(long) == String(long.prefix(59)) + "…")
        #expect(StackFrameSummary.abbreviated(long).count == 60)
        #expect(StackFrameSummary.abbreviated("App.spin()") == "App.spin()")
        var record = ReportFixtures.record("long", 400)
        record.stack = [StackFrameSummary(symbol: long, file: nil, line: nil, inApp: true)]
        let summary = Summary(collection: ReportFixtures.collection([record]))
        let text = SummaryTextRenderer(names: .full, wide: true).render(summary)
        #expect(text.contains("  " + StackFrameSummary.abbreviated(long) + "\n"))
        #expect(text.contains("    at \(long)\n"))
        // By default: simplified, and the table fits 120 columns.
        let simple = SummaryTextRenderer().render(summary)
        #expect(simple.contains("    at static Scenarios.waitForLockHeldByWorker(milliseconds:)\n"), "\(simple)")
        #expect(simple.split(separator: "\n").allSatisfy { $0.count <= SummaryTextRenderer.maxWidth }, "\(simple)")
    }

    @Test("Durations are formatted for people")
    func durations() {
        #expect(Durations.format(812.4) == "812 ms")
        #expect(Durations.format(1_204) == "1.20 s")
        #expect(Durations.format(125_000) == "2 min 05 s")
        #expect(Durations.change(from: 400, to: 500) == "+25%")
        #expect(Durations.change(from: 400, to: 300) == "-25%")
    }
}
