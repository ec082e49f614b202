import Foundation
import StallReportKit
import StallReportKitTestSupport
import Testing

/// `summarize`, `gate` and `show` fit their lines into `COLUMNS`: names, image names and paths
/// are shortened with `…`, never wrapped mid-word; the real CLI runs as a subprocess.
@Suite("stallreport output fits COLUMNS")
struct StallReportCLIWidthTests {
    /// Demangled-looking names far wider than any terminal.
    static let longSymbols = [
        // Each is longer than 200 characters.
        "generic specialization <Swift.Array<Swift.Dictionary<Swift.String, Swift.Int>>> of App.ImportPipeline.normalizeEveryRecordOfTheBatch(records: [Swift.Dictionary<Swift.String, Swift.Int>], options: App.ImportOptions) throws -> Swift.Int",
        "closure #1 @Sendable (Swift.UnsafeMutableRawBufferPointer) -> () in App.ImportPipeline.runTheWholeImportOnTheMainThreadWithoutYielding(batch: App.Batch, progress: (Swift.Double) -> (), completion: (Swift.Result<Swift.Int, Swift.Error>) -> ())",
        "App.ApplicationDelegate.applicationDidFinishLaunchingAndLoadedEveryConfigurationFileFromDisk(notification: Foundation.Notification, environment: [Swift.String: Swift.String], arguments: [Swift.String]) -> ()",
    ]

    /// A directory with the demo scenario plus a stall with very long names (in a directory with
    /// a long name) and one 60 frames deep (for show's call tree).
    static func setUp() throws -> (directory: ReportDirectory, reports: URL, long: URL, deep: URL, baseline: URL) {
        let (directory, reports) = try DemoScenario.newDirectory()
        let baseline = directory.url.appendingPathComponent("baseline.json")
        let made = try StallReportCLI.run(["baseline", reports.path, "-o", baseline.path])
        #expect(made.status == 0, "\(made)")
        // After the baseline: the spin stalls are gone (fixed), the long and the deep ones are new.
        for name in ["r01-spin.json", "r02-spin.json", "r03-spin.json", "r04-spin.json"] {
            try FileManager.default.removeItem(at: reports.appendingPathComponent(name))
        }
        let nested = try directory.subdirectory(
            "reports/a-directory-with-a-rather-long-name-as-ci-runners-make-them/and-another-level-below-it")
        let long = try ReportFixtures.write(
            DemoScenario.report(longSymbols, 2_400, minute: 9), to: nested,
            name: "stall-20260301T120900.000Z-p4242-0001-with-a-long-file-name.json")
        let deepSymbols = (0..<60).map { "App.RecursiveDescentParser.parseNestedExpression(level\($0):)" }
        let deep = try ReportFixtures.write(
            DemoScenario.report(deepSymbols, 900, minute: 10), to: nested, name: "deep.json")
        return (directory, reports, long, deep, baseline)
    }

    /// Runs `arguments` with `COLUMNS=width`; every line of stdout must fit.
    static func lines(_ arguments: [String], width: Int, expectStatus: Int32 = 0) throws -> [String] {
        let run = try StallReportCLI.run(arguments, environment: ["COLUMNS": "\(width)"])
        #expect(run.status == expectStatus, "\(run)")
        let lines = run.stdoutLines
        #expect(lines.count > 5, "\(run)")
        for line in lines {
            #expect(
                line.count <= width, "\(arguments.first ?? "") at COLUMNS=\(width): \(line.count) characters: \(line)")
            #expect(!line.contains("\u{1B}"), "no colour when stdout is not a terminal")
        }
        return lines
    }

    /// Checks the long names are cut at their end, not wrapped: the start of each is on one line
    /// ending in `…`, and no line starts with a piece of a name.
    static func expectShortenedNames(_ lines: [String], width: Int, symbols: [String] = longSymbols) {
        let text = lines.joined(separator: "\n")
        for symbol in symbols {
            let start = String(symbol.prefix(14))
            #expect(text.contains(start), "\(start) shown at COLUMNS=\(width)")
            #expect(!text.contains(symbol), "\(symbol.prefix(20))… shortened at COLUMNS=\(width)")
            let tail = String(symbol.suffix(20))
            #expect(
                !lines.contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix(tail) }, "no wrapped name piece")
        }
    }

    @Test("summarize fits 80 and 200 columns; at 200 the table uses the room", arguments: [80, 200])
    func summarize(width: Int) throws {
        let setup = try Self.setUp()
        let lines = try Self.lines(["summarize", "--full-names", setup.reports.path], width: width)
        if width == 200 { #expect(lines.contains { $0.count > 120 }, "the top frame column widens to COLUMNS") }
        Self.expectShortenedNames(lines, width: width)
    }

    @Test("gate (budgets with offenders, baseline with new and fixed) fits 80 and 200 columns", arguments: [80, 200])
    func gate(width: Int) throws {
        let setup = try Self.setUp()
        let lines = try Self.lines(
            [
                "gate", "--full-names", "--max-stalls", "0", "--max-per-fingerprint", "0", "--max-stall-ms", "100",
                "--baseline", setup.baseline.path, setup.reports.path,
            ], width: width, expectStatus: 1)
        let text = lines.joined(separator: "\n")
        #expect(text.contains("FAIL new "))
        #expect(text.contains("GOOD fixed "))
        #expect(text.contains("Verdict: FAILED"))
        if width == 200 { #expect(lines.contains { $0.count > 120 }, "names are shown wider at 200 columns") }
        // gate names a fingerprint by its headline (the leaf app frame) only.
        Self.expectShortenedNames(lines, width: width, symbols: [Self.longSymbols[0]])
    }

    @Test("show (facts, stack, deep call tree, several files) fits 80 and 200 columns", arguments: [80, 200])
    func show(width: Int) throws {
        let setup = try Self.setUp()
        let lines = try Self.lines(["show", "--full-names", setup.long.path, setup.deep.path], width: width)
        let text = lines.joined(separator: "\n")
        #expect(text.contains("with-a-long-file-name.json"), "the report path keeps its file name")
        #expect(text.contains("parseNestedExpression"))
        if width == 200 { #expect(lines.contains { $0.count > 120 }, "lines use the room at 200 columns") }
        Self.expectShortenedNames(lines, width: width)
    }
}
