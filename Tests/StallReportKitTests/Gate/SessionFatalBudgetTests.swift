import Foundation
import StallReportKitTestSupport
import Testing

@testable import StallReportKit

@Suite("Fatal stall budget")
struct SessionFatalBudgetTests {
    static let collection = ReportFixtures.collection([
        ReportFixtures.record("lock", 1_500, status: .fatal),
        ReportFixtures.record("lock", 1_400, at: 1, status: .fatal),
        ReportFixtures.record("spin", 900, at: 2, status: .fatal), ReportFixtures.record("spin", 300, at: 3),
        ReportFixtures.record("sleep", 400, at: 4),
    ])

    @Test("maxFatalStalls holds at the limit and fails above it, naming only fingerprints with fatal stalls")
    func budget() throws {
        let pass = Gate(config: GateConfig(maxFatalStalls: 3)).evaluate(Self.collection)
        #expect(pass.passed)
        #expect(pass.checks.map(\.verdictLine) == ["fatal stalls: 3 ≤ 3"])
        let fail = Gate(config: GateConfig(maxFatalStalls: 0)).evaluate(Self.collection)
        #expect(!fail.passed)
        let check = try #require(fail.failedChecks.first)
        #expect(check.kind == .maxFatalStalls)
        #expect(check.verdictLine == "fatal stalls: 3 > 0")
        #expect(check.offenders.map(\.fingerprint) == ["lock", "spin"])
        let text = GateTextRenderer().render(fail)
        #expect(text.contains("  FAIL fatal stalls: 3 > 0  (--max-fatal)\n"))
        #expect(text.contains("Verdict: FAILED — 1 budget violated (maxFatalStalls)"))
        #expect(JUnitWriter().render(fail).contains("maxFatalStalls ≤ 0"))
    }

    @Test("The config key maxFatalStalls is known, validated and overridden by the flag")
    func config() throws {
        #expect(GateConfig.knownKeys.contains("maxFatalStalls"))
        #expect(GateConfig(maxFatalStalls: -1).validationMessage() == "maxFatalStalls must be 0 or more")
        #expect(!GateConfig(maxFatalStalls: 0).checksNothing)
        #expect(GateConfig(maxFatalStalls: 5).merging(GateConfig(maxFatalStalls: 1)).maxFatalStalls == 1)
        #expect(GateConfig(maxFatalStalls: 5).merging(GateConfig()).maxFatalStalls == 5)
        let directory = try ReportFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("gate.json")
        try Data(#"{"maxFatalStalls": 2, "_maxFatalStalls": "comment"}"#.utf8).write(to: path)
        #expect(try GateConfig.load(path: path.path).maxFatalStalls == 2)
    }
}
