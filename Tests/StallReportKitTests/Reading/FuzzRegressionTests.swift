import Foundation
import StallReportKitTestSupport
import Testing

@testable import StallReportKit

/// Inputs the fuzzer (Scripts/fuzz) found problems with, kept as regression tests: each file in
/// Tests/Fuzz/regressions is loaded like `stallreport` loads a report, must not crash, and when it
/// decodes, its encoding must be a fixed point of decoding and encoding again.
@Suite("fuzz regressions")
struct FuzzRegressionTests {
    static var regressionsDirectory: URL {
        PackageRoot.url.appendingPathComponent("Tests/Fuzz/regressions")
    }

    @Test("every regression input loads without crashing and round-trips")
    func regressions() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.regressionsDirectory.path).sorted()
        #expect(!names.isEmpty)
        let loader = ReportLoader()
        for name in names {
            let result = loader.load(path: Self.regressionsDirectory.appendingPathComponent(name).path)
            guard case .success(let report) = result else { continue }
            let encoded = try report.encoded()
            guard case .success(let again) = loader.load(data: encoded) else {
                Issue.record("\(name): re-encoded report no longer decodes")
                continue
            }
            #expect(try again.encoded() == encoded, "\(name): changed in an encode/decode round trip")
        }
    }

    @Test("dates round-trip at millisecond precision", arguments: [0, 1, 195, 196, 499, 500, 998, 999])
    func dateRoundTrip(milliseconds: Int) throws {
        let text = "2026-11-22T02:46:10.\(String(milliseconds + 1000).dropFirst())Z"
        let date = try #require(ReportCoding.parseDate(text))
        #expect(ReportCoding.formatDate(date) == text)
        #expect(ReportCoding.parseDate(ReportCoding.formatDate(date)) == date)
    }
}
