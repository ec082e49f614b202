import ArgumentParser
import Foundation
import StallReportKit

/// `stallreport`: reads stall reports written by StallMonitor and summarizes, gates and diffs them.
@main
struct StallReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stallreport",
        abstract:
            "Summarize, gate, diff, show, export and symbolicate the stall reports StallMonitor writes (run loops, the MainActor, SwiftNIO loops, the concurrency pool).",
        discussion: """
            Reads stall reports and summarizes, gates or diffs them. Every subcommand
            takes report files and/or directories (searched recursively for *.json;
            hidden entries are skipped; symbolic links are followed, loops detected).
            Reports are decoded in parallel on all cores. Session records found next
            to the reports (*.session, one per monitored process) give summarize its
            stall rate per monitored hour.

            A file that cannot be used (empty, truncated, not JSON, not a report,
            unknown schemaVersion, unreadable, too large, nested too deep) is one line
            on stderr naming the file and the problem; the rest is still processed.
            With --strict, any such problem makes the command fail with status 2.

            EXIT STATUS
              0  success (gate: every budget holds, nothing new or regressed)
              1  the gate failed (gate only)
              2  usage or input error: bad flags; unreadable config, baseline or
                 suppressions file; no valid report nor session record at all
                 (unless --allow-empty); unusable files with --strict
              3  a report path given does not exist (always, even with
                 --allow-empty; the other paths are still read)

            EXAMPLES
              stallreport summarize .stall-reports
              stallreport summarize --format markdown --top 5 .stall-reports
              stallreport baseline .stall-reports -o stall-baseline.json
              stallreport gate --baseline stall-baseline.json .stall-reports
              stallreport gate --max-stall-ms 2000 --max-p95-ms 800 .stall-reports
              stallreport diff --base main-reports --head pr-reports
              stallreport show .stall-reports/stall-….json
              stallreport flamegraph .stall-reports -o stalls.html
              stallreport export --format speedscope .stall-reports -o stalls.json
              stallreport symbolicate --debug-dir symbols/ .stall-reports -o named/

            Run 'stallreport help <subcommand>' for the details of each subcommand.
            """,
        version: "1.0.0",
        subcommands: [
            SummarizeCommand.self, GateCommand.self, BaselineCommand.self, DiffCommand.self,
            ShowCommand.self, ExportCommand.self, FlameGraphCommand.self, SymbolicateCommand.self,
        ]
    )

    /// Parses and runs, mapping every usage error to exit status 2 (ArgumentParser's default is 64).
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let code as ExitCode {
            exit(withError: code)
        } catch {
            if exitCode(for: error) == .success { exit(withError: error) }  // --help, --version
            var message = UsageHints.improve(fullMessage(for: error))
            if !message.hasSuffix("\n") { message += "\n" }
            Output.stderr(message)
            exit(withError: ExitCode(ExitStatus.inputError))
        }
    }
}

/// The exit statuses documented in `--help`.
enum ExitStatus {
    /// Success.
    static let success: Int32 = 0
    /// The gate failed.
    static let gateFailed: Int32 = 1
    /// Usage or input error.
    static let inputError: Int32 = 2
    /// A report path given on the command line does not exist.
    static let missingPath: Int32 = 3
}
