import Foundation
import StallReportKit
import Testing

/// Simplified frame names (and `--full-names`) in the CLI's output, on the real demo's reports.
@Suite("stallreport names end to end")
struct StallReportCLINamesTests {
    static let spinFull = "static stall_demo.Scenarios.spinOnCPU(milliseconds: Swift.Int) -> ()"
    static let spinSimplified = "static Scenarios.spinOnCPU(milliseconds:)"

    /// `summarize` run in the reports' parent directory on their relative path, as a user types it.
    static func summarize(_ demo: VizDemo.Run, _ extra: [String] = []) throws -> StallReportCLI.Run {
        let parent = demo.directory.deletingLastPathComponent()
        let run = try StallReportCLI.run(["summarize", demo.directory.lastPathComponent] + extra, in: parent)
        #expect(run.status == 0, "\(run)")
        return run
    }

    @Test("The default summary fits in 120 columns and shows simplified names")
    func summaryFits() throws {
        let demo = try VizDemo.run()
        try #require(
            demo.reports.contains { $0.report.frames.contains { $0.symbol == Self.spinFull } },
            "the demo's reports name \(Self.spinFull)")
        let run = try Self.summarize(demo)
        for line in run.stdoutLines {
            #expect(line.count <= 120, "\(line.count) characters: \(line)")
        }
        #expect(run.stdout.contains("at \(Self.spinSimplified)"), "\(run)")
        #expect(!run.stdout.contains("Swift.Int"), "\(run)")
        #expect(!run.stdout.contains("stall_demo."), "\(run)")
    }

    @Test("--full-names shows the full names; JSON always has them")
    func fullNames() throws {
        let demo = try VizDemo.run()
        let full = try Self.summarize(demo, ["--full-names"])
        #expect(full.stdout.contains("at \(Self.spinFull)"), "\(full)")
        let wide = try Self.summarize(demo, ["--wide"])
        #expect(
            wide.stdoutLines.contains {
                $0.hasPrefix("#  FINGERPRINT") && $0.contains("P50") && $0.contains("FIRST SEEN")
            }, "\(wide)")
        let json = try Self.summarize(demo, ["--format", "json"])
        #expect(json.stdout.contains("spinOnCPU(milliseconds: Swift.Int)"), "\(json)")
    }

    @Test("show, gate and the exports show simplified names, full ones with --full-names")
    func otherCommands() throws {
        let demo = try VizDemo.run()
        let spin = try demo.report(naming: "spinOnCPU")
        let show = try StallReportCLI.run(["show", spin.path])
        #expect(
            show.status == 0 && show.stdout.contains(Self.spinSimplified) && !show.stdout.contains(Self.spinFull),
            "\(show)")
        // A full name with its offset and the crash-log columns before it can pass 120 columns
        // (where show cuts names when stdout is not a terminal): a wide terminal shows it whole.
        let showFull = try StallReportCLI.run(["show", "--full-names", spin.path], environment: ["COLUMNS": "200"])
        #expect(showFull.stdout.contains(Self.spinFull), "\(showFull)")

        let gate = try StallReportCLI.run(["gate", demo.directory.path, "--max-stall-ms", "1"])
        #expect(gate.stdout.contains(Self.spinSimplified) || gate.stdout.contains("Scenarios."), "\(gate)")
        #expect(!gate.stdout.contains("Swift.Int"), "\(gate)")

        let directory = try ReportDirectory()
        let folded = directory.url.appendingPathComponent("stalls.folded")
        let export = try StallReportCLI.run(["export", demo.directory.path, "--format", "folded", "-o", folded.path])
        #expect(export.status == 0, "\(export)")
        let text = try String(contentsOf: folded, encoding: .utf8)
        #expect(text.contains(Self.spinSimplified) && !text.contains(Self.spinFull))

        let html = directory.url.appendingPathComponent("stalls.html")
        let flame = try StallReportCLI.run(["flamegraph", demo.directory.path, "-o", html.path])
        #expect(flame.status == 0, "\(flame)")
        let page = try String(contentsOf: html, encoding: .utf8)
        let start = try #require(page.range(of: "id=\"flame-data\">"))
        let end = try #require(page.range(of: "</script>", range: start.upperBound..<page.endIndex))
        let data = try JSONDecoder().decode(
            FlameGraphData.self, from: Data(page[start.upperBound..<end.lowerBound].utf8))
        let frame = try #require(data.frames.first { $0.name == Self.spinSimplified })
        #expect(frame.full == Self.spinFull, "the full name is on hover")
    }
}
