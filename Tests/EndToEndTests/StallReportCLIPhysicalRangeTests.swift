import Foundation
import StallReportKit
import StallReportKitTestSupport
import StallReportModel
import Testing

/// Times no clock can measure (below 1 ns, other than 0) or no process lives through (above
/// 1e10 ms) are invalid input: the file is named with the key, never echoed or exported, and the
/// other reports are still read.
@Suite("stallreport: values outside physical range are input errors")
struct StallReportCLIPhysicalRangeTests {
    /// Fields and the literal each bad report carries there, with what its problem line says.
    static let bad: [(field: String, literal: String, says: String)] = [
        ("sampling.intervalMs", "1e-300", "sampling.intervalMs is 1e-300, below 1 ns"),
        ("sampling.effectiveIntervalMs", "0.0000001", "sampling.effectiveIntervalMs is 1e-07, below 1 ns"),
        ("samples.0.offsetMs", "5e-10", "samples[0].offsetMs is 5e-10, below 1 ns"),
        ("durationMs", "2e10", "durationMs is 20000000000.0, more than the largest accepted 10000000000.0 ms"),
        ("loop.longestPassMs", "1e-7", "loop.longestPassMs is 1e-07, below 1 ns"),
    ]

    @Test("summarize names each file and key; show refuses it; exports never carry the value")
    func refusedEverywhere() throws {
        let directory = try ReportDirectory()
        let reports = try directory.subdirectory("reports")
        let good = DemoScenario.report(DemoScenario.spinSymbols, 300, minute: 0)
        try ReportFixtures.write(good, to: reports, name: "good.json")
        // A zero offset and 1 ns exactly are measurements: read as they are.
        var edge = DemoScenario.report(["StallDemo.edge()"], 250, minute: 1)
        edge.sampling.effectiveIntervalMs = 1e-6
        try ReportFixtures.write(edge, to: reports, name: "edge.json")
        var files: [String] = []
        for (number, bad) in Self.bad.enumerated() {
            let report = DemoScenario.report(["StallDemo.bad\(number)()"], 400, minute: Double(number + 2))
            let data = try ReportJSONPatch.patch(try report.encoded(), keyPath: bad.field, literal: bad.literal)
            files.append(try directory.file("reports/bad-\(number).json", data).path)
        }

        let summary = try StallReportCLI.run(["summarize", "--format", "json", reports.path])
        #expect(summary.status == 0, "\(summary)")
        let totals = try #require(try summary.jsonObject()?["totals"] as? [String: Any], "\(summary)")
        #expect(totals["reportsRead"] as? Int == 2, "\(summary)")
        #expect(totals["problems"] as? Int == Self.bad.count, "\(summary)")
        for (number, bad) in Self.bad.enumerated() {
            let line = summary.stderrLines.first { $0.contains("bad-\(number).json") }
            #expect(line?.contains(bad.says) == true, "\(bad.field): \(summary.stderr)")
        }

        for (number, file) in files.enumerated() {
            let show = try StallReportCLI.run(["show", file])
            #expect(show.status != 0, "\(show)")
            #expect(show.stderr.contains(file) && show.stderr.contains(Self.bad[number].says), "\(show)")
            #expect(!show.stdout.contains(Self.bad[number].literal), "\(show)")
        }

        for format in ["speedscope", "folded", "chrome-trace"] {
            let export = try StallReportCLI.run(["export", "--format", format, reports.path, "-o", "-"])
            #expect(export.status == 0, "\(format): \(export)")
            #expect(
                !export.stdout.contains("e-300") && !export.stdout.contains("e-10") && !export.stdout.contains("e-07"),
                "\(format)")
            // Folded stacks count whole microseconds: the edge report's 1 ns samples round to none there.
            #expect(
                export.stdout.contains("edge()") || format != "speedscope", "\(format): the edge report is exported")
            for number in Self.bad.indices {
                #expect(!export.stdout.contains("bad\(number)()"), "\(format): bad report \(number) is exported")
            }
        }
    }
}
