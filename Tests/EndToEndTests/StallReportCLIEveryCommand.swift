import Foundation
import StallReportKit

/// Every way `stallreport` prints report data: each subcommand and each output format, run on one
/// set of report files. Property-style tests (extreme numbers, hostile strings) run them all.
enum EveryCommand {
    /// One invocation: a name for failure messages, the arguments, extra environment, and the file
    /// it writes besides stdout (nil when it writes only to stdout).
    struct Invocation: CustomStringConvertible {
        var name: String
        var arguments: [String]
        var environment: [String: String?] = [:]
        var outputFile: URL?

        var description: String { name }
    }

    /// The invocations reading `directory` (a directory of reports) and, for `show`, `files`;
    /// outputs go under `scratch`.
    static func invocations(directory: String, files: [String], scratch: URL) -> [Invocation] {
        let baseline = scratch.appendingPathComponent("baseline.json")
        let summary = scratch.appendingPathComponent("step-summary.md")
        let junit = scratch.appendingPathComponent("junit.xml")
        let html = scratch.appendingPathComponent("flame.html")
        var list: [Invocation] = [
            Invocation(name: "summarize", arguments: ["summarize", directory]),
            Invocation(name: "summarize --wide", arguments: ["summarize", "--wide", directory]),
            Invocation(name: "summarize json", arguments: ["summarize", "--format", "json", directory]),
            Invocation(name: "summarize markdown", arguments: ["summarize", "--format", "markdown", directory]),
            Invocation(name: "summarize --group-by scene", arguments: ["summarize", "--group-by", "scene", directory]),
            Invocation(
                name: "summarize markdown --group-by scene",
                arguments: ["summarize", "--format", "markdown", "--group-by", "scene", directory]),
            Invocation(name: "summarize --group-by loop", arguments: ["summarize", "--group-by", "loop", directory]),
            Invocation(
                name: "baseline", arguments: ["baseline", directory, "-o", baseline.path], outputFile: baseline),
            Invocation(
                name: "gate",
                arguments: [
                    "gate", "--max-stalls", "0", "--max-stall-ms", "1", "--max-p95-ms", "1", "--max-total-ms", "1",
                    "--junit", junit.path, directory,
                ],
                environment: [
                    "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": "/work/app", "GITHUB_STEP_SUMMARY": summary.path,
                ],
                outputFile: junit),
            Invocation(
                name: "diff",
                arguments: [
                    "diff", "--base", scratch.appendingPathComponent("empty").path, "--head", directory,
                    "--allow-empty",
                ]),
            Invocation(
                name: "diff markdown",
                arguments: [
                    "diff", "--format", "markdown", "--base", scratch.appendingPathComponent("empty").path,
                    "--head", directory, "--allow-empty",
                ]),
            Invocation(
                name: "diff json", arguments: ["diff", "--format", "json", "--base", directory, "--head", directory]),
            Invocation(name: "show", arguments: ["show", "--min-percent", "0"] + files),
            Invocation(name: "export folded", arguments: ["export", "--format", "folded", directory, "-o", "-"]),
            Invocation(
                name: "export speedscope", arguments: ["export", "--format", "speedscope", directory, "-o", "-"]),
            Invocation(
                name: "export chrome-trace", arguments: ["export", "--format", "chrome-trace", directory, "-o", "-"]),
            Invocation(
                name: "export pprof",
                arguments: [
                    "export", "--format", "pprof", directory, "-o", scratch.appendingPathComponent("p.pb.gz").path,
                ]),
            Invocation(name: "flamegraph", arguments: ["flamegraph", directory, "-o", html.path], outputFile: html),
        ]
        list.append(
            Invocation(
                name: "gate --baseline", arguments: ["gate", "--baseline", baseline.path, directory],
                environment: [
                    "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": "/work/app", "GITHUB_STEP_SUMMARY": summary.path,
                ],
                outputFile: summary))
        return list
    }

    /// Creates the empty base directory the diff invocations compare against.
    static func prepare(scratch: URL) throws {
        try FileManager.default.createDirectory(
            at: scratch.appendingPathComponent("empty"), withIntermediateDirectories: true)
    }
}
