import Foundation
import Testing

@Suite("stallreport: help and usage errors")
struct StallReportCLIHelpTests {
    @Test("The root --help explains the subcommands, the exit statuses and shows examples")
    func rootHelp() throws {
        let run = try StallReportCLI.run(["--help"])
        #expect(run.status == 0, "\(run)")
        for text in [
            "USAGE: stallreport <subcommand>", "summarize", "gate", "baseline", "diff", "EXIT STATUS",
            "0  success", "1  the gate failed", "2  usage or input error", "EXAMPLES", "--strict",
        ] {
            #expect(run.stdout.contains(text), "missing '\(text)'")
        }
        #expect(run.stderr.isEmpty)
    }

    @Test(
        "Each subcommand's --help explains itself with examples", arguments: ["summarize", "gate", "baseline", "diff"])
    func subcommandHelp(_ name: String) throws {
        let run = try StallReportCLI.run([name, "--help"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("USAGE: stallreport \(name)"))
        #expect(run.stdout.contains("EXAMPLES"))
        #expect(run.stdout.contains("stallreport \(name) "))
        let viaHelp = try StallReportCLI.run(["help", name])
        #expect(viaHelp.status == 0)
        #expect(viaHelp.stdout.contains("USAGE: stallreport \(name)"))
    }

    @Test("Help texts fit in 80 columns without mangled tables")
    func helpWidth() throws {
        let gate = try StallReportCLI.run(["gate", "--help"])
        #expect(
            gate.stdout.contains("\n  --max-per-fingerprint N   stalls of a fingerprint  maxStallsPerFingerprint\n"))
        #expect(
            gate.stdout.contains(
                "\n  stallreport gate --max-stall-ms 2000 --max-p95-ms 800 \\\n    --ignore-shorter-than 300 .stall-reports\n"
            ))
        for name in ["summarize", "gate", "baseline", "diff"] {
            let run = try StallReportCLI.run([name, "--help"])
            for line in run.stdoutLines where !line.hasPrefix("USAGE:") {  // ArgumentParser does not wrap usage
                #expect(line.count <= 80, "\(name): '\(line)'")
            }
        }
    }

    @Test(
        "Usage errors exit with status 2 and say what is wrong",
        arguments: [
            (["frobnicate"], "Unexpected argument 'frobnicate'"),
            (["summarize"], "give at least one report file or directory"),
            (["summarize", "--format", "yaml", "x"], "The value 'yaml' is invalid for '--format <format>'"),
            (["summarize", "--since", "last tuesday", "x"], "'last tuesday' is not an ISO 8601 date"),
            (["summarize", "--since", "2026-03-02", "--until", "2026-03-01", "x"], "--since must be before --until"),
            (["summarize", "--top", "0", "x"], "--top must be at least 1"),
            (["gate", "--max-stalls=-1", "x"], "--max-stalls must be 0 or more"),
            (["gate", "--tolerance=-0.5", "--max-stalls", "1", "x"], "--tolerance must be 0 or more"),
            (["diff", "only-one"], "give exactly two paths (BASE HEAD)"),
            (["diff", "--base", "a"], "--base and --head must both be given"),
            (["diff", "a", "b", "--base", "c", "--head", "d"], "use either two positional paths or --base/--head"),
            (["summarize", "--bogus", "x"], "Unknown option '--bogus'"),
        ])
    func usageErrors(_ arguments: [String], _ message: String) throws {
        let run = try StallReportCLI.run(arguments)
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr.contains(message), "\(run)")
        #expect(run.stdout.isEmpty)
    }

    @Test(
        "--json points to --format json, not to a look-alike option",
        arguments: [
            (["summarize", "--json", "x"], "JSON output is '--format json'"),
            (["diff", "--json", "a", "b"], "JSON output is '--format json'"),
            (["gate", "--json", "--max-stalls", "0", "x"], "'summarize' and 'diff' take '--format json'"),
            (["show", "--json", "x"], "'summarize' and 'diff' take '--format json'"),
        ])
    func jsonHint(_ arguments: [String], _ advice: String) throws {
        let run = try StallReportCLI.run(arguments)
        #expect(run.status == 2, "\(run)")
        let first = run.stderrLines.first ?? ""
        #expect(first.hasPrefix("Error: Unknown option '--json'. ") && first.contains(advice), "\(run)")
        #expect(!run.stderr.contains("Did you mean"), "\(run)")
    }

    @Test("--version prints the version")
    func version() throws {
        let run = try StallReportCLI.run(["--version"])
        #expect(run.status == 0)
        #expect(run.stdout == "1.0.0\n")
    }
}
