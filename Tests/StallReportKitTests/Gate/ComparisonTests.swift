import Foundation
import StallReportKitTestSupport
import Testing

@testable import StallReportKit

@Suite("Comparing base and head")
struct ComparisonTests {
    private func entry(_ fingerprint: String, count: Int, p95: Double) -> Baseline.Entry {
        Baseline.Entry(
            fingerprint: fingerprint, count: count, p50Ms: p95, p95Ms: p95, maxMs: p95, totalMs: p95 * Double(count),
            topFrame: "App.\(fingerprint)()")
    }

    @Test("Tolerance is relative and strict: exactly +25 % is not a regression, more is")
    func tolerance() {
        let policy = RegressionPolicy(tolerance: 0.25, minOccurrences: 1)
        let same = policy.compare(base: [entry("a", count: 4, p95: 400)], head: [entry("a", count: 5, p95: 500)])
        #expect(same.map(\.kind) == [.unchanged])
        let worse = policy.compare(base: [entry("a", count: 4, p95: 400)], head: [entry("a", count: 6, p95: 501)])
        #expect(worse.map(\.kind) == [.regressed])
        #expect(worse.first?.reasons == ["count 4 → 6 (+50%)", "p95 400 ms → 501 ms (+25%)"])
    }

    @Test("Every fingerprint of either side appears once, new first, then regressed, fixed, unchanged")
    func kinds() {
        let policy = RegressionPolicy(tolerance: 0, minOccurrences: 2)
        let changes = policy.compare(
            base: [
                entry("kept", count: 2, p95: 300), entry("worse", count: 1, p95: 300),
                entry("fixed", count: 3, p95: 300),
            ],
            head: [
                entry("kept", count: 2, p95: 300), entry("worse", count: 3, p95: 300), entry("new", count: 1, p95: 900),
            ])
        #expect(changes.map(\.fingerprint) == ["new", "worse", "fixed", "kept"])
        #expect(changes.map(\.kind) == [.new, .regressed, .fixed, .unchanged])
        #expect(changes[0].belowMinimum && !changes[0].isFailure)
        #expect(!changes[1].belowMinimum && changes[1].isFailure)
    }

    @Test("Diff JSON reports counts per kind and the relative p95 change")
    func diffJSON() throws {
        let base = ReportFixtures.collection([ReportFixtures.record("a", 400), ReportFixtures.record("gone", 300)])
        let head = ReportFixtures.collection([ReportFixtures.record("a", 600), ReportFixtures.record("b", 300)])
        let diff = DiffResult(base: base, head: head, policy: RegressionPolicy())
        let json = DiffJSON(diff)
        #expect(json.counts == ["new": 1, "regressed": 1, "fixed": 1, "unchanged": 0])
        let a = try #require(json.fingerprints.first { $0.fingerprint == "a" })
        #expect(a.p95Change == 0.5)
        #expect(a.change == .regressed)
        let text = DiffRenderer().renderText(diff)
        #expect(text.contains("regressed a: p95 400 ms → 600 ms (+50%)"))
        #expect(DiffRenderer().renderMarkdown(diff).contains("| **new** | `b` |"))
    }
}
