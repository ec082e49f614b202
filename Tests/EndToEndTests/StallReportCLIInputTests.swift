import Foundation
import StallReportKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("stallreport: bad input is normal input")
struct StallReportCLIInputTests {
    let directory: ReportDirectory
    let reports: URL

    init() throws { (directory, reports) = try DemoScenario.newDirectory() }

    /// Adds every kind of broken file next to the valid reports; returns file name → expected message.
    private func addBrokenFiles() throws -> [String: String] {
        let valid = try DemoScenario.reports[0].1.encoded()
        try directory.file("reports/broken/empty.json", Data())
        try directory.file("reports/broken/truncated.json", valid.prefix(valid.count / 3))
        try directory.file(
            "reports/broken/garbage.json", Data((0..<8_192).map { UInt8(truncatingIfNeeded: $0 &* 197 &+ 11) }))
        try directory.file("reports/broken/package.json", #"{"name": "not-a-report", "version": "1.0.0"}"#)
        try directory.file("reports/broken/array.json", "[1, 2, 3]")
        try directory.file("reports/broken/future.json", #"{"schemaVersion": 7, "id": "x"}"#)
        try directory.file("reports/broken/partial.json", #"{"schemaVersion": 1, "id": "x", "fingerprint": "f"}"#)
        try directory.file("reports/broken/deep.json", Data(repeating: UInt8(ascii: "["), count: 100_000))
        // Well-formed reports with values the schema rules out: counted, they would make the
        // total and the percentiles wrong.
        var negative = DemoScenario.reports[0].1
        negative.durationMs = -5
        try directory.file("reports/broken/negative.json", try negative.encoded())
        var dangling = DemoScenario.reports[0].1
        dangling.representativeStack.append(dangling.frames.count + 3)
        try directory.file("reports/broken/index.json", try dangling.encoded())
        // 50 MB: a JSON object with one huge string, read and decoded in full (under the 64 MiB limit).
        var big = Data(#"{"schemaVersion": 1, "padding": ""#.utf8)
        big.append(Data(repeating: UInt8(ascii: "x"), count: 50_000_000))
        big.append(Data(#""}"#.utf8))
        try directory.file("reports/broken/big.json", big)
        let broken = directory.url.appendingPathComponent("reports/broken")
        try FileManager.default.createSymbolicLink(
            atPath: broken.appendingPathComponent("loop").path, withDestinationPath: "..")
        try FileManager.default.createSymbolicLink(
            atPath: broken.appendingPathComponent("self.json").path, withDestinationPath: "self.json")
        try FileManager.default.createSymbolicLink(
            atPath: broken.appendingPathComponent("dangling.json").path, withDestinationPath: "gone.json")
        return [
            "broken/empty.json": "file is empty",
            "broken/truncated.json": "invalid JSON: the document ends early (truncated file?)",
            "broken/garbage.json": "invalid JSON: binary data, not JSON text",
            "broken/package.json": "not a stall report: no schemaVersion",
            "broken/array.json": "not a stall report: top level is not a JSON object",
            "broken/future.json": "unsupported schemaVersion 7 (this tool reads version 1)",
            "broken/partial.json": "not a stall report: missing key 'status'",
            "broken/deep.json": "JSON nested deeper than 512 levels; not decoded",
            "broken/negative.json": "value out of range: durationMs is -5.0, must be a finite number, 0 or more",
            "broken/index.json":
                "value out of range: representativeStack has index \(dangling.frames.count + 3), but there are \(dangling.frames.count) frames",
            "broken/big.json": "not a stall report: missing key 'id'",
            "broken/loop": "symbolic link loop: leads back to a directory that contains it; not followed",
            "broken/self.json": "symbolic link loop (too many levels of symbolic links)",
            "broken/dangling.json": "dangling symbolic link (target gone.json does not exist)",
        ]
    }

    @Test("Each broken file is one stderr line naming it; the valid reports are still summarized")
    func brokenFiles() throws {
        let expected = try addBrokenFiles()
        let run = try StallReportCLI.run(["summarize", reports.path])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdoutLines[0] == "9 stalls, 4 distinct (by fingerprint), total stall time 6.51 s")
        #expect(run.stdoutLines[2] == "read: 9 reports from 20 files, 14 problems (see stderr)")
        let lines = run.stderrLines
        #expect(lines.count == expected.count, "\(run)")
        for (name, message) in expected {
            let line = "stallreport: \(reports.path)/\(name): \(message)"
            #expect(lines.contains(line), "missing: \(line)\n\(run.stderr)")
        }
        #expect(lines == lines.sorted(), "problems are listed in path order")
    }

    @Test("--strict turns problems into exit status 2, after the output")
    func strict() throws {
        try directory.file("reports/zzz-empty.json", Data())
        let run = try StallReportCLI.run(["summarize", "--strict", reports.path])
        #expect(run.status == 2, "\(run)")
        #expect(run.stdoutLines[0].hasPrefix("9 stalls"))
        #expect(
            run.stderrLines == [
                "stallreport: \(reports.path)/zzz-empty.json: file is empty",
                "stallreport: error: 1 file could not be used and --strict was given",
            ])
        let clean = try StallReportCLI.run([
            "summarize", "--strict", reports.appendingPathComponent("r01-spin.json").path,
        ])
        #expect(clean.status == 0, "\(clean)")
    }

    @Test("--max-file-size refuses big files before reading them")
    func sizeLimit() throws {
        var big = Data(#"{"schemaVersion": 1, "padding": ""#.utf8)
        big.append(Data(repeating: UInt8(ascii: "x"), count: 3 * 1024 * 1024))
        big.append(Data(#""}"#.utf8))
        try directory.file("reports/big.json", big)
        let run = try StallReportCLI.run(["summarize", "--max-file-size", "2", reports.path])
        #expect(run.status == 0)
        #expect(
            run.stderrLines == [
                "stallreport: \(reports.path)/big.json: file too large (3.0 MiB, limit 2.0 MiB; raise it with --max-file-size)"
            ])
    }

    @Test("An unreadable file is reported (as root, which can read it anyway, it is summarized)")
    func unreadable() throws {
        let locked = reports.appendingPathComponent("r09-recursion.json")
        #expect(chmod(locked.path, 0) == 0)
        let run = try StallReportCLI.run(["summarize", reports.path])
        #expect(run.status == 0, "\(run)")
        if geteuid() == 0 {
            #expect(run.stderr.isEmpty)
            #expect(run.stdoutLines[0].hasPrefix("9 stalls"))
        } else {
            #expect(run.stderrLines == ["stallreport: \(locked.path): cannot read file: Permission denied"])
            #expect(run.stdoutLines[0].hasPrefix("8 stalls"))
        }
    }

    @Test(
        "No valid report at all is exit status 2; --allow-empty accepts an empty directory",
        arguments: ["summarize", "baseline", "gate"])
    func nothingValid(_ command: String) throws {
        let empty = try directory.subdirectory("empty")
        try directory.file("onlybad/bad.json", "{")
        var extra: [String] = command == "gate" ? ["--max-stalls", "0"] : []
        if command == "baseline" { extra += ["-o", directory.url.appendingPathComponent("b.json").path] }

        let none = try StallReportCLI.run([command] + extra + [empty.path])
        #expect(none.status == 2, "\(none)")
        #expect(
            none.stderrLines == [
                "stallreport: \(empty.path): no report files (*.json) found in this directory",
                "stallreport: error: no report files found in \(empty.path); pass --allow-empty if no reports means no stalls",
            ])
        #expect(none.stdout.isEmpty)

        let bad = try StallReportCLI.run([command] + extra + [directory.url.appendingPathComponent("onlybad").path])
        #expect(bad.status == 2)
        #expect(bad.stderrLines.last?.contains("no valid report among the 1 file found") == true, "\(bad)")

        let allowed = try StallReportCLI.run([command, "--allow-empty"] + extra + [empty.path])
        #expect(allowed.status == 0, "\(allowed)")
        #expect(allowed.stderr.isEmpty)
    }

    @Test("A missing path is an error (exit status 3), the other paths are still read")
    func missingPath() throws {
        let missing = directory.url.appendingPathComponent("no-such-dir").path
        let run = try StallReportCLI.run(["summarize", missing, reports.path])
        #expect(run.status == 3)
        #expect(
            run.stderrLines == [
                "stallreport: \(missing): no such file or directory",
                "stallreport: error: \(missing) does not exist (check the path; --allow-empty only accepts an existing directory without reports)",
            ])
        #expect(run.stdoutLines[0].hasPrefix("9 stalls"))
    }
}
