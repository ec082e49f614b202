import Foundation
import StallReportKit
import StallReportKitTestSupport
import Testing

@Suite("stallreport baseline and diff")
struct StallReportCLIBaselineDiffTests {
    let directory: ReportDirectory
    let base: URL
    let head: URL

    /// Base: spin ×2 (300, 600), lock ×1 (500), sleep ×2. Head: spin ×4, lock ×2, sleep ×2, recursion ×1.
    init() throws {
        directory = try ReportDirectory()
        base = try DemoScenario.write(
            to: directory, under: "base",
            only: ["r01-spin.json", "r02-spin.json", "r05-lock.json", "r07-sleep.json", "r08-sleep.json"])
        head = try DemoScenario.write(to: directory, under: "head")
        try FileManager.default.removeItem(at: head.appendingPathComponent("r07-sleep.json"))
        try FileManager.default.removeItem(at: head.appendingPathComponent("r08-sleep.json"))
    }

    @Test("baseline writes counts and durations per fingerprint; -o - prints it")
    func baseline() throws {
        let file = directory.url.appendingPathComponent("stall-baseline.json")
        let run = try StallReportCLI.run(["baseline", head.path, "-o", file.path])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout == "wrote baseline of 3 fingerprints (7 stalls) to \(file.path)\n")
        let baseline = try Baseline.load(path: file.path)
        let spin = try #require(baseline.byFingerprint[DemoScenario.spin])
        #expect(
            spin
                == Baseline.Entry(
                    fingerprint: DemoScenario.spin, count: 4, p50Ms: 600, p95Ms: 1_200, maxMs: 1_200, totalMs: 3_000,
                    topFrame: "StallDemo.spinCPU(milliseconds:)"))
        #expect(baseline.fingerprints.map(\.fingerprint) == baseline.fingerprints.map(\.fingerprint).sorted())

        let printed = try StallReportCLI.run(["baseline", "--min-duration", "1000", head.path, "-o", "-"])
        #expect(printed.status == 0)
        let decoded = try ReportCoding.makeDecoder().decode(Baseline.self, from: Data(printed.stdout.utf8))
        #expect(decoded.reports == 2)
        #expect(Set(decoded.fingerprints.map(\.fingerprint)) == [DemoScenario.spin, DemoScenario.lock])

        let defaultName = try StallReportCLI.run(["baseline", head.path], in: directory.url)
        #expect(defaultName.stdout == "wrote baseline of 3 fingerprints (7 stalls) to stall-baseline.json\n")
    }

    @Test("diff text: new, regressed, fixed and unchanged with counts and p95 change")
    func text() throws {
        let run = try StallReportCLI.run(["diff", base.path, head.path])
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr.isEmpty)
        let lines = run.stdoutLines
        #expect(
            lines[0] == "base: 5 stalls (2.21 s), head: 7 stalls (5.70 s); 1 new, 2 regressed, 1 fixed, 0 unchanged")
        #expect(lines[1] == "regression: count or p95 more than 25% above base; min occurrences 1")
        let header = try #require(lines.firstIndex { $0.hasPrefix("CHANGE") })
        let rows = lines[(header + 1)...(header + 4)].map {
            $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        }
        #expect(rows.map { $0[0] } == ["new", "regressed", "regressed", "fixed"])
        #expect(
            rows.map { $0[1] } == [DemoScenario.recursion, DemoScenario.spin, DemoScenario.lock, DemoScenario.sleep])
        #expect(
            rows[1].prefix(10) == [
                "regressed", DemoScenario.spin, "2", "4", "600", "ms", "1.20", "s", "+100%",
                "StallDemo.spinCPU(milliseconds:)",
            ])
        #expect(rows[3].prefix(7) == ["fixed", DemoScenario.sleep, "2", "-", "410", "ms", "-"])
        #expect(run.stdout.contains("regressed \(DemoScenario.lock): count 1 → 2 (+100%), p95 500 ms → 1.50 s (+200%)"))
    }

    @Test("diff with --base/--head taking several paths each, and identical sides")
    func options() throws {
        let extra = try directory.subdirectory("extra")
        try ReportFixtures.write(DemoScenario.report(["StallDemo.extra()"], 333, minute: 30), to: extra, name: "x.json")
        let run = try StallReportCLI.run([
            "diff", "--base", base.path, extra.path, "--head", head.path, extra.path, "--format", "json",
        ])
        #expect(run.status == 0, "\(run)")
        let object = try #require(try run.jsonObject())
        #expect((object["counts"] as? [String: Int]) == ["new": 1, "regressed": 2, "fixed": 1, "unchanged": 1])

        let same = try StallReportCLI.run(["diff", head.path, head.path])
        #expect(same.status == 0)
        #expect(
            same.stdoutLines[0]
                == "base: 7 stalls (5.70 s), head: 7 stalls (5.70 s); 0 new, 0 regressed, 0 fixed, 3 unchanged")
    }

    @Test("diff JSON: documented keys and exact numbers")
    func json() throws {
        let run = try StallReportCLI.run(["diff", "--format", "json", base.path, head.path])
        #expect(run.status == 0, "\(run)")
        let object = try #require(try run.jsonObject())
        #expect(
            Set(object.keys) == [
                "formatVersion", "kind", "tolerance", "minOccurrences", "base", "head", "counts", "fingerprints",
            ])
        #expect(object["kind"] as? String == "diff")
        #expect((object["base"] as? [String: Any])?["stalls"] as? Int == 5)
        #expect((object["head"] as? [String: Any])?["totalMs"] as? Double == 5_700)
        let changes = try #require(object["fingerprints"] as? [[String: Any]])
        let spin = try #require(changes.first { $0["fingerprint"] as? String == DemoScenario.spin })
        #expect(spin["change"] as? String == "regressed")
        #expect(spin["baseCount"] as? Int == 2)
        #expect(spin["headCount"] as? Int == 4)
        #expect(spin["p95Change"] as? Double == 1)
        let fixed = try #require(changes.first { $0["change"] as? String == "fixed" })
        #expect(fixed["headCount"] as? Int == 0)
        #expect(fixed["headP95Ms"] == nil)
    }

    @Test("diff markdown, tolerance and minimum occurrences")
    func markdown() throws {
        let run = try StallReportCLI.run([
            "diff", "--format", "markdown", "--tolerance", "3", "--min-occurrences", "2", base.path, head.path,
        ])
        #expect(run.status == 0, "\(run)")
        #expect(
            run.stdout.hasPrefix(
                "## Stall diff\n\nbase: 5 stalls (2.21 s), head: 7 stalls (5.70 s); 1 new, 0 regressed, 1 fixed, 2 unchanged."
            ))
        #expect(
            run.stdout.contains(
                "| **new*** | `\(DemoScenario.recursion)` | - | 1 | - | 700 ms | - | `StallDemo.recurse(depth:)` |"))
        #expect(run.stdout.contains("| **unchanged** | `\(DemoScenario.spin)` | 2 | 4 | 600 ms | 1.20 s | +100% |"))
        #expect(run.stdout.contains("\\* fewer occurrences in head than --min-occurrences"))
    }

    @Test("diff: one empty side is fine (everything new or fixed); both empty is an input error")
    func emptySides() throws {
        let empty = try directory.subdirectory("empty")
        let run = try StallReportCLI.run(["diff", empty.path, head.path])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdoutLines[0].hasSuffix("3 new, 0 regressed, 0 fixed, 0 unchanged"))
        #expect(run.stderrLines == ["stallreport: \(empty.path): no report files (*.json) found in this directory"])
        let strict = try StallReportCLI.run(["diff", "--strict", empty.path, head.path])
        #expect(strict.status == 2)
        let both = try StallReportCLI.run(["diff", empty.path, empty.path])
        #expect(both.status == 2)
        #expect(both.stderrLines.last?.hasPrefix("stallreport: error: no valid report in base") == true, "\(both)")
        let allowed = try StallReportCLI.run(["diff", "--allow-empty", empty.path, empty.path])
        #expect(allowed.status == 0)
        #expect(allowed.stdout.contains("No stalls on either side."))
    }
}
