import Foundation
import FoundationXML
import StallReportKitTestSupport
import Testing

@testable import StallReportKit

@Suite("JUnit XML and GitHub annotations")
struct CIOutputTests {
    static func failingResult(fingerprints: Int) -> GateResult {
        var records: [StallRecord] = []
        for index in 0..<fingerprints {
            var record = ReportFixtures.record("f\(index)", 300 + Double(index))
            record.stack = [
                StackFrameSummary(
                    symbol: "App.<stall \(index)> & \"quoted\"", file: "/ws/Sources/App/S.swift", line: 10 + index,
                    inApp: true)
            ]
            records.append(record)
        }
        let base = Baseline(
            createdAt: Date(timeIntervalSince1970: 0), reports: 1,
            fingerprints: [
                .init(
                    fingerprint: "fixedone", count: 1, p50Ms: 1, p95Ms: 1, maxMs: 1, totalMs: 1, topFrame: "App.old()")
            ])
        return Gate(config: GateConfig(maxStalls: 1, maxStallMs: 300, baseline: "b"), baseline: base).evaluate(
            ReportFixtures.collection(records))
    }

    @Test("JUnit: well-formed XML, one case per budget and per fingerprint, failures where expected")
    func junit() throws {
        let result = Self.failingResult(fingerprints: 3)
        let document = try XMLDocument(xmlString: JUnitWriter().render(result))
        let budgetCases = try document.nodes(forXPath: "//testsuite[@name='stallreport.budgets']/testcase")
        #expect(budgetCases.count == 2)
        let fingerprintCases = try document.nodes(forXPath: "//testsuite[@name='stallreport.fingerprints']/testcase")
        #expect(fingerprintCases.count == 4)  // three counted + one fixed
        #expect(try document.nodes(forXPath: "//testcase/failure").count == 5)  // 2 budgets + 3 new fingerprints
        let names = fingerprintCases.compactMap { ($0 as? XMLElement)?.attribute(forName: "name")?.stringValue }
        #expect(names.contains("f0 App.<stall 0> & \"quoted\""))
        let root = try #require(document.rootElement())
        #expect(root.attribute(forName: "failures")?.stringValue == "5")
    }

    @Test("Annotations: escaped, located in the workspace, capped at 10 per level plus one summary line")
    func annotations() {
        let result = Self.failingResult(fingerprints: 14)
        let writer = GitHubAnnotations(workspace: "/ws")
        let all = writer.annotations(for: result)
        #expect(all.filter { $0.level == "error" }.count == 16)  // 2 budgets + 14 new
        let lines = writer.render(result).split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("::error ") }.count == 10)
        #expect(lines.filter { $0.hasPrefix("::notice ") }.count == 2)  // fixed + summary
        #expect(
            lines.last
                == "::notice title=stallreport::6 more errors not shown as annotations (GitHub shows at most 10 per level per step); see the log of this step"
        )
        #expect(lines.contains { $0.hasPrefix("::error file=Sources/App/S.swift,line=1") })
        #expect(lines.allSatisfy { !$0.dropFirst(2).contains("\n") })
        #expect(GitHubAnnotations.escapeData("50% done\nnext\r") == "50%25 done%0Anext%0D")
        #expect(GitHubAnnotations.escapeProperty("a:b,c") == "a%3Ab%2Cc")
    }

    @Test("No annotations when the gate passes cleanly")
    func quiet() {
        let result = Gate(config: GateConfig(maxStalls: 5)).evaluate(
            ReportFixtures.collection([ReportFixtures.record("a", 300)]))
        #expect(GitHubAnnotations(workspace: nil).render(result) == "")
        #expect(GateMarkdownRenderer().render(result).hasPrefix("## ✅ Stall gate passed"))
    }
}
