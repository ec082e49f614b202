import Foundation
import StallReportKitTestSupport
import Testing

@testable import StallReportKit

@Suite("Reading many reports in parallel")
struct CollectorTests {
    @Test("Eight workers give the same groups as one, for 300 reports plus broken files")
    func parallelMatchesSerial() throws {
        let directory = try ReportFixtures.temporaryDirectory()
        let symbols = [["App.spin(milliseconds:)"], ["App.waitOnLock()", "App.refresh()"], ["App.parseFeed(_:)"]]
        for index in 0..<300 {
            let report = ReportFixtures.report(
                appSymbols: symbols[index % 3], durationMs: Double(250 + (index * 37) % 900),
                startedAt: Date(timeIntervalSince1970: 1_772_366_400 + Double(index)))
            try ReportFixtures.write(report, to: directory, name: String(format: "r%04d.json", index))
        }
        try Data().write(to: directory.appendingPathComponent("broken-empty.json"))
        try Data("{\"schemaVersion\":1".utf8).write(to: directory.appendingPathComponent("broken-truncated.json"))

        let serial = ReportCollector(workers: 1).collect([directory.path])
        let parallel = ReportCollector(workers: 8).collect([directory.path])
        #expect(serial.reportsRead == 300)
        #expect(serial.filesFound == 302)
        #expect(parallel.reportsRead == 300)
        #expect(parallel.problems == serial.problems)
        #expect(
            parallel.problems.map { URL(fileURLWithPath: $0.path).lastPathComponent } == [
                "broken-empty.json", "broken-truncated.json",
            ])
        let a = serial.stats()
        let b = parallel.stats()
        #expect(a.count == 3)
        #expect(a.map(\.fingerprint) == b.map(\.fingerprint))
        #expect(a.map(\.sortedDurations) == b.map(\.sortedDurations))
        #expect(a.map(\.worst) == b.map(\.worst))
        #expect(a.map(\.count) == [100, 100, 100])
    }

    @Test("Filters count what they leave out")
    func filters() {
        let records = [
            ReportFixtures.record("a", 200, at: 0), ReportFixtures.record("a", 400, at: 10),
            ReportFixtures.record("b", 900, at: 20),
        ]
        let filter = RecordFilter(since: Date(timeIntervalSince1970: 1_772_366_405), minDurationMs: 300)
        let collection = ReportFixtures.collection(records, filter: filter)
        #expect(collection.reportsRead == 3)
        #expect(collection.reportsFilteredOut == 1)
        #expect(collection.reportsMatched == 2)
        let untilFilter = RecordFilter(until: Date(timeIntervalSince1970: 1_772_366_420))
        #expect(ReportFixtures.collection(records, filter: untilFilter).reportsMatched == 2)  // until is exclusive
    }

    @Test("Merging accumulators in any order gives the same result")
    func orderIndependence() {
        let records = (0..<20).map {
            ReportFixtures.record("f", Double(($0 * 53) % 700 + 250), at: Double($0), path: "/r/\($0).json")
        }
        var forward = FingerprintAccumulator(fingerprint: "f")
        records.forEach { forward.add($0) }
        var left = FingerprintAccumulator(fingerprint: "f")
        var right = FingerprintAccumulator(fingerprint: "f")
        for (index, record) in records.reversed().enumerated() {
            if index % 2 == 0 { left.add(record) } else { right.add(record) }
        }
        right.merge(left)
        #expect(forward.stats() == right.stats())
    }

    @Test("The representative stack shows the app's frames, leaf first, with file and line")
    func representativeStack() {
        let report = ReportFixtures.report(
            appSymbols: ["App.waitOnLock()", "App.refresh()"], durationMs: 500, classification: .blocked)
        let stack = StackFrameSummary.representative(of: report)
        #expect(stack.map(\.symbol) == ["App.waitOnLock()", "App.refresh()"])
        #expect(stack.map(\.location) == ["\(ReportFixtures.appFile):40", "\(ReportFixtures.appFile):47"])
        let systemOnly = ReportFixtures.report(appSymbols: [], durationMs: 500)
        #expect(StackFrameSummary.representative(of: systemOnly).first?.symbol == "__lll_lock_wait")
    }
}
