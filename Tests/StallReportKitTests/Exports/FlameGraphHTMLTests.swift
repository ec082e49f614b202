import Foundation
import Testing

@testable import StallReportKit

@Suite("Flame graph page")
struct FlameGraphHTMLTests {
    /// The JSON inside the page's data element.
    static func embeddedData(_ html: String) throws -> FlameGraphData {
        let start = try #require(html.range(of: "<script type=\"application/json\" id=\"flame-data\">"))
        let end = try #require(html.range(of: "</script>", range: start.upperBound..<html.endIndex))
        return try JSONDecoder().decode(FlameGraphData.self, from: Data(html[start.upperBound..<end.lowerBound].utf8))
    }

    @Test("The page is self-contained and carries the merged tree and the summary")
    func selfContained() throws {
        let html = try FlameGraphHTML.render(ProfileFixtures.profiles, title: "Nightly <run>")
        #expect(!html.contains("http://") && !html.contains("https://"))
        #expect(html.range(of: #"<(script|link|img|iframe)[^>]*\b(src|href)="#, options: .regularExpression) == nil)
        #expect(html.contains("<title>Nightly &lt;run&gt;</title>"))
        let data = try Self.embeddedData(html)
        #expect(data.root.w == ProfileFixtures.sampledMs)
        #expect(data.root.n == 17)
        #expect(data.summary.stalls == 2 && data.summary.fingerprints == 2 && data.summary.samples == 17)
        #expect(data.summary.totalStallMs == 2_000)
        #expect(data.frames.contains { $0.name == "App.spin()" && $0.app })
        #expect(data.frames.contains { $0.name == "__lll_lock_wait" && !$0.app })
        #expect(data.frames.contains { $0.name == "[no stack]" && $0.synthetic })
    }

    @Test("A frame name cannot close the script element")
    func escaping() throws {
        let report = ProfileFixtures.report(["App.x() </script><script>alert(1)</script>"], stack: 1)
        let html = try FlameGraphHTML.render([StallProfile(report: report, path: "/r.json")])
        #expect(!html.contains("alert(1)</script>"))
        #expect(html.components(separatedBy: "</script>").count == 3)  // the data element and the code
        let data = try Self.embeddedData(html)
        #expect(data.frames.contains { $0.name == "App.x() </script><script>alert(1)</script>" })
    }
}
