import Foundation
import StallReportKitTestSupport
import Testing

@testable import StallReportKit

@Suite("Finding report files")
struct ReportScannerTests {
    let root: URL

    init() throws {
        root = try ReportFixtures.temporaryDirectory()
    }

    private func touch(_ relative: String) throws {
        let url = root.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: url)
    }

    private func link(_ relative: String, to target: String) throws {
        try FileManager.default.createSymbolicLink(
            atPath: root.appendingPathComponent(relative).path, withDestinationPath: target)
    }

    @Test("Recursive, *.json only, hidden entries skipped, sorted")
    func recursion() throws {
        try touch("b.json")
        try touch("a.json")
        try touch("notes.txt")
        try touch(".tmp-123.json")
        try touch(".hidden/c.json")
        try touch("nested/deeper/d.JSON")
        let result = ReportScanner().scan([root.path])
        #expect(result.files == ["a.json", "b.json", "nested/deeper/d.JSON"].map { root.path + "/" + $0 })
        #expect(result.problems.isEmpty)
    }

    @Test("A file given by name is read whatever its extension")
    func explicitFile() throws {
        try touch("report.txt")
        let path = root.appendingPathComponent("report.txt").path
        #expect(ReportScanner().scan([path]).files == [path])
    }

    @Test("A link back to an ancestor is a loop, reported once, and does not hang")
    func directoryLoop() throws {
        try touch("x/r.json")
        try link("x/up", to: "..")
        let result = ReportScanner().scan([root.path])
        #expect(result.files == [root.path + "/x/r.json"])
        #expect(result.problems.map(\.path) == [root.path + "/x/up"])
        #expect(result.problems.first?.message.contains("symbolic link loop") == true)
    }

    @Test("Self-referencing and dangling links are reported; two links to one file read it once")
    func links() throws {
        try touch("real.json")
        try link("self.json", to: "self.json")
        try link("gone.json", to: "missing.json")
        try link("alias.json", to: "real.json")
        let result = ReportScanner().scan([root.path, root.appendingPathComponent("real.json").path])
        #expect(result.files == [root.path + "/alias.json"])
        let messages = Dictionary(
            uniqueKeysWithValues: result.problems.map {
                ($0.path.replacingOccurrences(of: root.path + "/", with: ""), $0.message)
            })
        #expect(messages["self.json"]?.contains("symbolic link loop") == true)
        #expect(messages["gone.json"] == "dangling symbolic link (target missing.json does not exist)")
        #expect(messages.count == 2)
    }

    @Test("A file found in a directory and also given by name, or hard-linked, is read once, where it came first")
    func repeatsKeepFirst() throws {
        try touch("a.json")
        try touch("b.json")
        try touch("c.json")
        try FileManager.default.linkItem(
            atPath: root.appendingPathComponent("c.json").path, toPath: root.appendingPathComponent("d.json").path)
        let b = root.appendingPathComponent("b.json").path
        let directoryFirst = ReportScanner().scan([root.path, b])
        #expect(directoryFirst.files == ["a.json", "b.json", "c.json"].map { root.path + "/" + $0 })
        let fileFirst = ReportScanner().scan([b, root.path])
        #expect(fileFirst.files == [b] + ["a.json", "c.json"].map { root.path + "/" + $0 })
        let collected = ReportCollector(workers: 2).collect([root.path, b])
        #expect(collected.filesFound == 3)
    }

    @Test("Names sort as Swift strings sort, also beyond ASCII")
    func nonASCIIOrder() throws {
        let names = ["z.json", "\u{e9}t\u{e9}.json", "e\u{301}a.json", "E.json", "a.json", "\u{1F600}.json"]
        for name in names { try touch(name) }
        let result = ReportScanner().scan([root.path])
        #expect(result.files == names.sorted().map { root.path + "/" + $0 })
    }

    @Test("A directory without reports and a missing path are problems; allow-empty mode drops the first")
    func emptyAndMissing() throws {
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("empty"), withIntermediateDirectories: true)
        let empty = root.appendingPathComponent("empty").path
        let missing = root.appendingPathComponent("nope").path
        let strict = ReportScanner().scan([empty, missing])
        #expect(
            strict.problems == [
                ReportProblem(path: empty, message: "no report files (*.json) found in this directory"),
                ReportProblem(path: missing, message: "no such file or directory"),
            ])
        let lenient = ReportScanner(reportEmptyDirectories: false).scan([empty, missing])
        #expect(lenient.problems.map(\.path) == [missing])
    }
}
