import Foundation
import StallReportKitTestSupport
import Testing

@testable import StallReportKit

@Suite("Gate budgets, baseline and suppressions")
struct GateTests {
    static let collection = ReportFixtures.collection([
        ReportFixtures.record("spin", 300), ReportFixtures.record("spin", 400), ReportFixtures.record("spin", 500),
        ReportFixtures.record("lock", 1_200, classification: .blocked),
    ])

    private func check(_ config: GateConfig, _ kind: BudgetKind) -> BudgetCheck? {
        Gate(config: config).evaluate(Self.collection).checks.first { $0.kind == kind }
    }

    @Test("Each budget holds at its limit and fails one above, naming the offenders")
    func budgets() throws {
        #expect(check(GateConfig(maxStalls: 4), .maxStalls)?.passed == true)
        let stalls = try #require(check(GateConfig(maxStalls: 3), .maxStalls))
        #expect(!stalls.passed && stalls.actual == 4 && stalls.offenders.map(\.fingerprint) == ["spin", "lock"])

        #expect(check(GateConfig(maxStallsPerFingerprint: 3), .maxStallsPerFingerprint)?.passed == true)
        let perFingerprint = try #require(check(GateConfig(maxStallsPerFingerprint: 2), .maxStallsPerFingerprint))
        #expect(perFingerprint.offenders.map(\.fingerprint) == ["spin"])

        #expect(check(GateConfig(maxStallMs: 1_200), .maxStallMs)?.passed == true)
        let longest = try #require(check(GateConfig(maxStallMs: 450), .maxStallMs))
        #expect(longest.offenders.map(\.fingerprint) == ["lock", "spin"])
        #expect(longest.actual == 1_200)

        #expect(check(GateConfig(maxP95Ms: 1_200), .maxP95Ms)?.passed == true)
        let p95 = try #require(check(GateConfig(maxP95Ms: 600), .maxP95Ms))
        #expect(p95.offenders.map(\.fingerprint) == ["lock"])

        #expect(check(GateConfig(maxTotalStallMs: 2_400), .maxTotalStallMs)?.passed == true)
        let total = try #require(check(GateConfig(maxTotalStallMs: 2_399), .maxTotalStallMs))
        // equal totals: more stalls first
        #expect(!total.passed && total.offenders.map(\.fingerprint) == ["spin", "lock"])
    }

    @Test("ignoreShorterThanMs works through the filter: short stalls are not counted")
    func ignoreShort() {
        let records = [
            ReportFixtures.record("spin", 300), ReportFixtures.record("spin", 400),
            ReportFixtures.record("lock", 1_200),
        ]
        let collection = ReportFixtures.collection(records, filter: RecordFilter(minDurationMs: 350))
        let result = Gate(config: GateConfig(maxStalls: 2, ignoreShorterThanMs: 350)).evaluate(collection)
        #expect(result.passed)
        #expect(result.stallsCounted == 2)
        #expect(result.reportsFilteredOut == 1)
    }

    @Test("Active suppressions are not counted; expired ones count again and are listed as expired")
    func suppressions() throws {
        let list = SuppressionList(suppressions: [
            .init(fingerprint: "lock", reason: "APP-12 lock rewrite", expires: "2026-03-01"),
            .init(fingerprint: "spin", reason: "old", expires: "2026-02-01T00:00:00Z"),
        ])
        let lastDay = try #require(ReportCoding.parseDate("2026-03-01T23:59:59Z"))
        let result = Gate(config: GateConfig(maxStallMs: 1_000), suppressions: list, now: lastDay).evaluate(
            Self.collection)
        #expect(result.passed)
        #expect(result.suppressed.map(\.suppression.fingerprint) == ["lock"])
        #expect(result.expired.map(\.suppression.fingerprint) == ["spin"])
        #expect(result.stallsCounted == 3)

        let nextDay = try #require(ReportCoding.parseDate("2026-03-02T00:00:00Z"))
        let later = Gate(config: GateConfig(maxStallMs: 1_000), suppressions: list, now: nextDay).evaluate(
            Self.collection)
        #expect(!later.passed)
        #expect(later.expired.map(\.suppression.fingerprint) == ["lock", "spin"])
        #expect(later.failedChecks.first?.offenders.map(\.fingerprint) == ["lock"])
    }

    @Test("Baseline: new and regressed fail, fixed is good news, below-minimum is a warning")
    func baseline() {
        let base = Baseline(
            createdAt: Date(timeIntervalSince1970: 0), reports: 6,
            fingerprints: [
                .init(
                    fingerprint: "spin", count: 2, p50Ms: 350, p95Ms: 400, maxMs: 400, totalMs: 700,
                    topFrame: "App.spin()"),
                .init(
                    fingerprint: "gone", count: 4, p50Ms: 300, p95Ms: 300, maxMs: 300, totalMs: 1_200,
                    topFrame: "App.old()"),
            ])
        let result = Gate(config: GateConfig(baseline: "b.json"), baseline: base).evaluate(Self.collection)
        #expect(!result.passed)
        #expect(result.failingChanges.map(\.fingerprint) == ["lock", "spin"])
        let spin = result.failingChanges[1]
        #expect(spin.kind == .regressed)
        #expect(spin.reasons == ["count 2 → 3 (+50%)"])  // p95 500 is exactly +25 %: within tolerance
        #expect(result.fixed.map(\.fingerprint) == ["gone"])

        let tolerant = Gate(config: GateConfig(baseline: "b.json", tolerance: 0.5, minOccurrences: 2), baseline: base)
            .evaluate(Self.collection)
        #expect(tolerant.passed)  // spin: +50 % is within 0.5; lock: new but only once
        #expect(tolerant.toleratedChanges.map(\.fingerprint) == ["lock"])
    }

    @Test("A suppressed fingerprint is neither new nor fixed against the baseline")
    func suppressedAgainstBaseline() {
        let base = Baseline(createdAt: Date(timeIntervalSince1970: 0), reports: 0, fingerprints: [])
        let list = SuppressionList(suppressions: [.init(fingerprint: "lock", reason: "r", expires: "2999-01-01")])
        let result = Gate(config: GateConfig(maxStalls: 10, baseline: "b"), baseline: base, suppressions: list)
            .evaluate(Self.collection)
        #expect(result.changes?.map(\.fingerprint) == ["spin"])
    }
}
