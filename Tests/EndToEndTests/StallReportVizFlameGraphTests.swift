import Foundation
import StallReportKit
import Testing

/// `stallreport flamegraph` on the real demo's reports, checked as a file and in headless Chromium.
@Suite("stallreport flamegraph end to end", .serialized)
struct StallReportVizFlameGraphTests {
    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Writes the demo's flame graph into `directory` and returns its path.
    static func write(to directory: ReportDirectory) throws -> (URL, VizDemo.Run) {
        let demo = try VizDemo.run()
        let output = directory.url.appendingPathComponent("stalls.html")
        let run = try StallReportCLI.run([
            "flamegraph", demo.directory.path, "-o", output.path, "--title", "Demo stalls",
        ])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("wrote flame graph of \(demo.reports.count) stalls"))
        return (output, demo)
    }

    @Test("The HTML is self-contained and carries the merged samples")
    func selfContained() throws {
        let directory = try ReportDirectory()
        let (output, demo) = try Self.write(to: directory)
        let html = try String(contentsOf: output, encoding: .utf8)
        #expect(!html.contains("http://") && !html.contains("https://"))
        #expect(html.range(of: #"<(script|link|img|iframe)[^>]*\b(src|href)="#, options: .regularExpression) == nil)
        #expect(html.contains("<title>Demo stalls</title>"))
        let start = try #require(html.range(of: "id=\"flame-data\">"))
        let end = try #require(html.range(of: "</script>", range: start.upperBound..<html.endIndex))
        let data = try JSONDecoder().decode(
            FlameGraphData.self, from: Data(html[start.upperBound..<end.lowerBound].utf8))
        #expect(abs(data.root.w - demo.sampledMs) < 0.01)
        #expect(data.summary.stalls == demo.reports.count)
        #expect(data.root.n == demo.reports.reduce(0) { $0 + $1.report.samples.count })
        #expect(data.frames.contains { $0.name.contains("spinOnCPU") && $0.app })
        #expect(data.frames.contains { $0.name.contains("CFRunLoopRun") && !$0.app })
    }

    @Test("Headless Chromium renders frame boxes", .enabled(if: chromium != nil, "Chromium is not installed"))
    func rendersInChromium() throws {
        let directory = try ReportDirectory()
        let (output, _) = try Self.write(to: directory)
        let profile = directory.url.appendingPathComponent("chromium-profile").path
        let dom = try ToolRunner.run(
            Self.chromium!,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(profile)",
                "--window-size=1400,900", "--dump-dom", output.absoluteString,
            ], input: "")
        let rendered = try #require(
            dom.range(of: #"data-rendered="(\d+)""#, options: .regularExpression), "the script did not run")
        let count = Int(dom[rendered].filter(\.isNumber)) ?? 0
        #expect(count > 20, "only \(count) frame boxes")
        #expect(dom.contains("class=\"fr app"))
        #expect(dom.contains("class=\"fr sys"))
        #expect(
            dom.range(of: #"class="fr app[^"]*"[^>]*>[^<]*spinOnCPU"#, options: .regularExpression) != nil,
            "no labelled app frame box")
    }
}
