import Foundation
import FoundationXML
import StallReportKit
import StallReportKitTestSupport
import Testing

@Suite("stallreport gate")
struct StallReportCLIGateTests {
    let directory: ReportDirectory
    let reports: URL

    init() throws { (directory, reports) = try DemoScenario.newDirectory() }

    /// One budget kind: a flag, a value that holds, a value that fails, the verdict line of each,
    /// and the fingerprints that must be named as offenders.
    struct BudgetCase: Sendable, CustomTestStringConvertible {
        var flag: String
        var passing: String
        var failing: String
        var passLine: String
        var failLine: String
        var offenders: @Sendable () -> [String]
        var testDescription: String { flag }
    }

    static let budgetCases: [BudgetCase] = [
        BudgetCase(
            flag: "--max-stalls", passing: "9", failing: "8", passLine: "PASS stalls in total: 9 ≤ 9",
            failLine: "FAIL stalls in total: 9 > 8",
            offenders: { [DemoScenario.spin, DemoScenario.lock, DemoScenario.sleep, DemoScenario.recursion] }),
        BudgetCase(
            flag: "--max-per-fingerprint", passing: "4", failing: "1", passLine: "PASS stalls per fingerprint: 4 ≤ 4",
            failLine: "FAIL stalls per fingerprint: 4 > 1",
            offenders: { [DemoScenario.spin, DemoScenario.lock, DemoScenario.sleep] }),
        BudgetCase(
            flag: "--max-stall-ms", passing: "1500", failing: "1000",
            passLine: "PASS longest single stall: 1.50 s ≤ 1.50 s",
            failLine: "FAIL longest single stall: 1.50 s > 1.00 s",
            offenders: { [DemoScenario.lock, DemoScenario.spin] }),
        BudgetCase(
            flag: "--max-p95-ms", passing: "1500", failing: "800",
            passLine: "PASS p95 duration per fingerprint: 1.50 s ≤ 1.50 s",
            failLine: "FAIL p95 duration per fingerprint: 1.50 s > 800 ms",
            offenders: { [DemoScenario.lock, DemoScenario.spin] }),
        BudgetCase(
            flag: "--max-total-ms", passing: "6510", failing: "6000",
            passLine: "PASS total stall time: 6.51 s ≤ 6.51 s",
            failLine: "FAIL total stall time: 6.51 s > 6.00 s",
            offenders: { [DemoScenario.spin, DemoScenario.lock, DemoScenario.sleep, DemoScenario.recursion] }),
    ]

    @Test(
        "Every budget kind passes at its limit (exit 0) and fails above it (exit 1) naming the offenders",
        arguments: budgetCases)
    func budget(_ budget: BudgetCase) throws {
        let pass = try StallReportCLI.run(["gate", budget.flag, budget.passing, reports.path])
        #expect(pass.status == 0, "\(pass)")
        #expect(pass.stdout.contains("  \(budget.passLine)  (\(budget.flag))"), "\(pass)")
        #expect(pass.stdoutLines.contains("Verdict: PASSED (1 budget checked)"))
        #expect(pass.stderr.isEmpty)

        let fail = try StallReportCLI.run(["gate", budget.flag, budget.failing, reports.path])
        #expect(fail.status == 1, "\(fail)")
        #expect(fail.stdout.contains("  \(budget.failLine)  (\(budget.flag))"), "\(fail)")
        #expect(fail.stdout.contains("Verdict: FAILED — 1 budget violated"))
        let budgetLine = try #require(fail.stdoutLines.firstIndex { $0.contains(budget.failLine) })
        let named = fail.stdoutLines[(budgetLine + 1)...].prefix { $0.hasPrefix("       ") }.map {
            $0.split(separator: " ")[0]
        }
        #expect(named.map(String.init) == budget.offenders(), "\(fail)")
        #expect(fail.stderr.isEmpty)
    }

    @Test("--ignore-shorter-than (alias --min-duration) leaves short stalls out of every budget")
    func ignoreShorter() throws {
        let strictRun = try StallReportCLI.run(["gate", "--max-stalls", "5", reports.path])
        #expect(strictRun.status == 1)
        let ignoring = try StallReportCLI.run([
            "gate", "--max-stalls", "5", "--ignore-shorter-than", "600", reports.path,
        ])
        #expect(ignoring.status == 0, "\(ignoring)")
        // Wrapped to fit 120 columns (stdout is not a terminal, COLUMNS is not set).
        #expect(
            ignoring.stdoutLines.prefix(2) == [
                "stallreport gate: 5 stalls counted (3 fingerprints), total stall time 4.90 s;",
                "  4 shorter than 600 ms or outside --since/--until",
            ])
        let alias = try StallReportCLI.run(["gate", "--max-stalls", "5", "--min-duration", "600", reports.path])
        #expect(alias.status == 0)
    }

    @Test("All budgets at once: the verdict lists every violated budget")
    func allBudgets() throws {
        let run = try StallReportCLI.run([
            "gate", "--max-stalls", "1", "--max-per-fingerprint", "1", "--max-stall-ms", "100",
            "--max-p95-ms", "100", "--max-total-ms", "100", reports.path,
        ])
        #expect(run.status == 1)
        #expect(
            run.stdoutLines.last
                == "Verdict: FAILED — 5 budgets violated (maxStalls, maxStallsPerFingerprint, maxStallMs, maxP95Ms, maxTotalStallMs)"
        )
    }

    @Test("Nothing to check is a usage error")
    func nothingToCheck() throws {
        let run = try StallReportCLI.run(["gate", reports.path])
        #expect(run.status == 2)
        #expect(
            run.stderrLines == [
                "stallreport: error: nothing to check: give at least one budget (e.g. --max-stalls 0), a --baseline, or a --config with budgets"
            ])
    }

    @Test("A config file sets budgets; flags override it; unknown keys and bad files are exit status 2")
    func configFile() throws {
        let config = try directory.file(
            "gate.json",
            """
            {"_comment": "CI budgets", "maxStalls": 20, "maxStallsPerFingerprint": 10, "maxStallMs": 1000,
             "maxP95Ms": 5000, "maxTotalStallMs": 60000, "ignoreShorterThanMs": 350}
            """)
        let run = try StallReportCLI.run(["gate", "--config", config.path, reports.path])
        #expect(run.status == 1, "\(run)")
        #expect(run.stdout.contains("PASS stalls in total: 8 ≤ 20"))
        #expect(run.stdout.contains("FAIL longest single stall: 1.50 s > 1.00 s"))
        #expect(run.stdoutLines.last == "Verdict: FAILED — 1 budget violated (maxStallMs)")

        let overridden = try StallReportCLI.run([
            "gate", "--config", config.path, "--max-stall-ms", "2000", reports.path,
        ])
        #expect(overridden.status == 0, "\(overridden)")
        #expect(overridden.stdout.contains("PASS longest single stall: 1.50 s ≤ 2.00 s"))

        let typo = try directory.file("typo.json", #"{"maxStall": 3}"#)
        let typoRun = try StallReportCLI.run(["gate", "--config", typo.path, reports.path])
        #expect(typoRun.status == 2)
        #expect(
            typoRun.stderrLines.first?.hasPrefix(
                "stallreport: error: \(typo.path): unknown key 'maxStall' in gate config") == true, "\(typoRun)")
        #expect(typoRun.stdout.isEmpty)

        let missing = try StallReportCLI.run([
            "gate", "--config", directory.url.appendingPathComponent("nope.json").path, reports.path,
        ])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("cannot read gate config file"))
    }

    @Test("The example config in Reports/ works with its baseline and suppressions")
    func exampleConfig() throws {
        let root = PackageRoot.url
        let run = try StallReportCLI.run([
            "gate", "--config", root.appendingPathComponent("Reports/stallreport-gate.example.json").path, reports.path,
        ])
        #expect(run.status == 1, "\(run)")  // the demo's fingerprints are all new against the example baseline
        #expect(run.stdout.contains("Baseline ("))
        #expect(run.stdout.contains("tolerance 25%, min occurrences 2"))
        #expect(run.stdout.contains("GOOD fixed 0d9e4c2b7f318a55"))
        #expect(run.stdout.contains("WARN new \(DemoScenario.recursion)"), "one occurrence is below minOccurrences 2")
        #expect(run.stdout.contains("FAIL new \(DemoScenario.spin)"))
    }

    @Test(
        "Baseline: new and regressed fingerprints fail, fixed ones are good news, tolerance and minimum occurrences apply"
    )
    func baseline() throws {
        // Baseline from spin ×2 (300, 600) and lock ×1 (500) and an extra fingerprint that will be fixed.
        let before = try directory.subdirectory("before")
        for name in ["r01-spin.json", "r02-spin.json", "r05-lock.json"] {
            try ReportFixtures.write(DemoScenario.reports.first { $0.0 == name }!.1, to: before, name: name)
        }
        let fixedReport = DemoScenario.report(["StallDemo.oldStall()"], 800, minute: 0)
        try ReportFixtures.write(fixedReport, to: before, name: "old.json")
        let baselineFile = directory.url.appendingPathComponent("stall-baseline.json")
        let record = try StallReportCLI.run(["baseline", before.path, "-o", baselineFile.path])
        #expect(record.status == 0, "\(record)")
        #expect(record.stdout == "wrote baseline of 3 fingerprints (4 stalls) to \(baselineFile.path)\n")

        let run = try StallReportCLI.run(["gate", "--baseline", baselineFile.path, reports.path])
        #expect(run.status == 1, "\(run)")
        #expect(run.stdout.contains("FAIL new \(DemoScenario.sleep)  2 stalls, p95 410 ms  StallDemo.Stalls.sleep()"))
        #expect(run.stdout.contains("FAIL new \(DemoScenario.recursion)  1 stall, p95 700 ms"))
        #expect(
            run.stdout.contains("FAIL regressed \(DemoScenario.spin)  count 2 → 4 (+100%), p95 600 ms → 1.20 s (+100%)")
        )
        #expect(
            run.stdout.contains("FAIL regressed \(DemoScenario.lock)  count 1 → 2 (+100%), p95 500 ms → 1.50 s (+200%)")
        )
        #expect(
            run.stdout.contains("GOOD fixed \(fixedReport.fingerprint)  was 1 stall, none now  StallDemo.oldStall()"))
        #expect(run.stdoutLines.last == "Verdict: FAILED — 2 new fingerprints, 2 regressed fingerprints")

        // Generous tolerance and a minimum of 3 occurrences: everything is a warning at most.
        let lenient = try StallReportCLI.run([
            "gate", "--baseline", baselineFile.path, "--tolerance", "2", "--min-occurrences", "3", reports.path,
        ])
        #expect(lenient.status == 0, "\(lenient)")
        #expect(lenient.stdout.contains("WARN new \(DemoScenario.sleep)"))
        #expect(lenient.stdout.contains("(fewer than 3 occurrences: not failing)"))
        #expect(lenient.stdout.contains("SAME 2 known fingerprints within tolerance"))
        #expect(lenient.stdoutLines.last == "Verdict: PASSED (0 budgets checked; 1 fixed fingerprint)")

        // The same reports against their own baseline: nothing new, nothing regressed.
        let selfBaseline = directory.url.appendingPathComponent("self.json")
        #expect(try StallReportCLI.run(["baseline", reports.path, "-o", selfBaseline.path]).status == 0)
        let same = try StallReportCLI.run(["gate", "--baseline", selfBaseline.path, reports.path])
        #expect(same.status == 0, "\(same)")
        #expect(same.stdout.contains("SAME 4 known fingerprints within tolerance"))

        let broken = try directory.file("broken-baseline.json", "{\"fingerprints\": 3}")
        let brokenRun = try StallReportCLI.run(["gate", "--baseline", broken.path, reports.path])
        #expect(brokenRun.status == 2)
        #expect(brokenRun.stderr.contains("\(broken.path): not a baseline file"))
    }

    @Test("Suppressions: active ones are not counted, expired ones count again and are called expired")
    func suppressions() throws {
        let file = try directory.file(
            "suppressions.json",
            """
            {"suppressions": [
              {"fingerprint": "\(DemoScenario.lock)", "reason": "APP-12: lock rewrite in progress", "expires": "2999-12-31"},
              {"fingerprint": "\(DemoScenario.spin)", "reason": "APP-7: old spin", "expires": "2020-01-01"},
              {"fingerprint": "0000000000000000", "reason": "long gone", "expires": "2020-01-01"}
            ]}
            """)
        let run = try StallReportCLI.run(["gate", "--max-stall-ms", "1000", "--suppressions", file.path, reports.path])
        #expect(run.status == 1, "\(run)")  // spin's 1.2 s counts again: its suppression expired
        #expect(
            run.stdoutLines[0]
                == "stallreport gate: 7 stalls counted (3 fingerprints), total stall time 4.51 s; 2 suppressed")
        #expect(
            run.stdout.contains(
                "SUPP \(DemoScenario.lock)  2 stalls not counted until 2999-12-31: APP-12: lock rewrite in progress"))
        #expect(
            run.stdout.contains(
                "EXPIRED \(DemoScenario.spin)  suppression expired 2020-01-01, counted again (4 stalls): APP-7: old spin"
            ))
        #expect(
            run.stdout.contains(
                "EXPIRED 0000000000000000  suppression expired 2020-01-01, did not occur; the entry can be removed: long gone"
            ))
        #expect(run.stdout.contains("FAIL longest single stall: 1.20 s > 1.00 s"))

        let fixedTime = try StallReportCLI.run([
            "gate", "--max-stall-ms", "1000", "--suppressions", file.path, "--now", "2019-12-31T12:00:00Z",
            reports.path,
        ])
        #expect(fixedTime.status == 0, "\(fixedTime)")  // before 2020-01-01 ended, spin is still suppressed

        let bad = try directory.file(
            "bad-suppressions.json", #"{"suppressions": [{"fingerprint": "x", "reason": "r", "expires": "next week"}]}"#
        )
        let badRun = try StallReportCLI.run(["gate", "--max-stalls", "1", "--suppressions", bad.path, reports.path])
        #expect(badRun.status == 2)
        #expect(
            badRun.stderrLines == [
                "stallreport: error: \(bad.path): suppressions[0]: expires 'next week' is not a date (use YYYY-MM-DD or an ISO 8601 date-time)"
            ])
    }

    @Test("--junit writes one test case per budget and per fingerprint")
    func junit() throws {
        let xml = directory.url.appendingPathComponent("out/stall-gate.xml")
        try FileManager.default.createDirectory(at: xml.deletingLastPathComponent(), withIntermediateDirectories: true)
        let run = try StallReportCLI.run([
            "gate", "--max-stalls", "100", "--max-stall-ms", "1000", "--junit", xml.path, reports.path,
        ])
        #expect(run.status == 1)
        let document = try XMLDocument(contentsOf: xml)
        #expect(try document.nodes(forXPath: "//testsuite[@name='stallreport.budgets']/testcase").count == 2)
        #expect(try document.nodes(forXPath: "//testsuite[@name='stallreport.fingerprints']/testcase").count == 4)
        let failures = try document.nodes(forXPath: "//testcase[failure]/@name").compactMap(\.stringValue)
        #expect(
            failures.sorted()
                == [
                    "\(DemoScenario.lock) StallDemo.waitOnMutex()",
                    "\(DemoScenario.spin) StallDemo.spinCPU(milliseconds:)", "maxStallMs ≤ 1.00 s",
                ].sorted())

        let unwritable = try StallReportCLI.run([
            "gate", "--max-stalls", "100", "--junit", directory.url.appendingPathComponent("missing-dir/x.xml").path,
            reports.path,
        ])
        #expect(unwritable.status == 2)
        #expect(unwritable.stderr.contains("cannot write JUnit XML"))
    }

    @Test("GitHub Actions: annotations on stdout, capped at 10 per level, and a step summary appended")
    func githubActions() throws {
        let many = try directory.subdirectory("many")
        for index in 0..<13 {
            try ReportFixtures.write(
                DemoScenario.report(["StallDemo.stall\(index)()"], 400 + Double(index), minute: Double(index)),
                to: many, name: "n\(index).json")
        }
        try directory.file("many/broken.json", "{")
        let baseline = try directory.file(
            "empty-baseline.json",
            #"{"baselineVersion": 1, "createdAt": "2026-01-01T00:00:00Z", "reports": 0, "fingerprints": []}"#)
        let summary = try directory.file("step-summary.md", "# Earlier step\n")
        let run = try StallReportCLI.run(
            ["gate", "--baseline", baseline.path, "--max-stall-ms", "100", many.path],
            environment: [
                "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": summary.path, "GITHUB_WORKSPACE": "/work/app",
            ])
        #expect(run.status == 1)
        let annotations = run.stdoutLines.filter { $0.hasPrefix("::") }
        #expect(annotations.filter { $0.hasPrefix("::error ") }.count == 10)
        #expect(annotations.filter { $0.hasPrefix("::warning ") }.count == 1)
        #expect(
            annotations.last
                == "::notice title=stallreport::4 more errors not shown as annotations (GitHub shows at most 10 per level per step); see the log of this step"
        )
        #expect(
            annotations.contains {
                $0.hasPrefix(
                    "::error file=Sources/App/Stalls.swift,line=40,title=Stall budget maxStallMs violated::longest single stall: 412 ms > 100 ms%0A"
                )
            })
        #expect(
            annotations.contains {
                $0.hasPrefix("::error file=Sources/App/Stalls.swift,line=40,title=New main-thread stall::New stall ")
            })
        #expect(
            annotations.contains(
                "::warning title=Unusable stall report::\(many.path)/broken.json: invalid JSON: the document ends early (truncated file?)"
            ))
        let markdown = try String(contentsOf: summary, encoding: .utf8)
        #expect(markdown.hasPrefix("# Earlier step\n## ❌ Stall gate failed\n"))
        #expect(markdown.contains("| ❌ | longest single stall | `--max-stall-ms` | 100 ms | 412 ms |"))
        #expect(markdown.contains("| ❌ | new | `"))

        let local = try StallReportCLI.run(["gate", "--baseline", baseline.path, many.path])
        #expect(!local.stdout.contains("::"), "no workflow commands outside GitHub Actions")
    }
}
