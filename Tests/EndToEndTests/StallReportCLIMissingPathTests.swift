import Foundation
import StallReportKit
import StallReportKitTestSupport
import Testing

/// A path that does not exist is always an error with its own exit status (3), `--allow-empty`
/// or not: a typo in a CI script must not pass the gate. `--allow-empty` only accepts an existing
/// directory without reports.
@Suite("stallreport: a missing path is never an empty run")
struct StallReportCLIMissingPathTests {
    static let commands: [[String]] = [
        ["summarize"], ["gate", "--max-stalls", "0"], ["baseline", "-o", "-"],
        ["export", "--format", "folded", "-o", "-"],
        ["flamegraph", "-o", "-"],
    ]

    @Test(
        "A typo fails with exit status 3, with or without --allow-empty, and the hint does not suggest --allow-empty",
        arguments: commands)
    func typo(_ command: [String]) throws {
        let directory = try ReportDirectory()
        let typo = directory.url.appendingPathComponent("nonexistent/typo").path
        for allowEmpty in [false, true] {
            let run = try StallReportCLI.run(command + (allowEmpty ? ["--allow-empty"] : []) + [typo])
            #expect(run.status == 3, "\(command) allowEmpty \(allowEmpty): \(run)")
            #expect(!run.stdout.contains("PASSED"), "\(run)")
            #expect(!run.stderr.contains("pass --allow-empty"), "\(run)")
            #expect(run.stderr.contains("\(typo) does not exist"), "\(run)")
        }
    }

    @Test("--allow-empty still accepts an existing empty directory (exit status 0)", arguments: commands)
    func existingEmptyDirectory(_ command: [String]) throws {
        let directory = try ReportDirectory()
        let empty = try directory.subdirectory("empty")
        let run = try StallReportCLI.run(command + ["--allow-empty", empty.path])
        #expect(run.status == 0, "\(command): \(run)")
    }

    @Test("diff and show: a missing path is exit status 3 too")
    func diffAndShow() throws {
        let (directory, reports) = try DemoScenario.newDirectory()
        let typo = directory.url.appendingPathComponent("typo").path
        let diff = try StallReportCLI.run(["diff", "--allow-empty", "--base", typo, "--head", reports.path])
        #expect(diff.status == 3, "\(diff)")
        let show = try StallReportCLI.run(["show", reports.appendingPathComponent("r01-spin.json").path, typo])
        #expect(show.status == 3, "\(show)")
        #expect(show.stdout.hasPrefix("Stall of 300 ms"), "the existing report is still shown: \(show)")
    }

    @Test("show takes several files, each shown in turn")
    func showSeveral() throws {
        let (directory, reports) = try DemoScenario.newDirectory()
        defer { withExtendedLifetime(directory) {} }
        let files = ["r01-spin.json", "r05-lock.json", "r07-sleep.json"].map { reports.appendingPathComponent($0).path }
        let run = try StallReportCLI.run(["show"] + files)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdoutLines.filter { $0.hasPrefix("Stall of ") }.count == 3)
    }
}
