import Foundation
import StallReportKit
import Testing

/// One run of the real `stall-demo` binary with its default scenarios, shared by every
/// end-to-end test that reads that output (the demo's own checks, the viz and gate tests): its
/// output and its reports, read. About 7 s, once per test process.
enum VizDemo {
    struct Run: Sendable {
        /// The demo process: status and output.
        var process: StallReportCLI.Run
        /// Directory holding the demo's reports.
        var directory: URL
        /// The reports, by file path.
        var reports: [(path: String, report: StallReport)]

        /// Samples × effective interval over all reports, in milliseconds.
        var sampledMs: Double {
            reports.reduce(0) { $0 + Double($1.report.samples.count) * $1.report.sampling.effectiveIntervalMs }
        }

        /// The longest stall whose samples name `function`.
        func report(naming function: String) throws -> (path: String, report: StallReport) {
            let matching = reports.filter { $0.report.frames.contains { $0.symbol?.contains(function) == true } }
            return try #require(
                matching.max { $0.report.durationMs < $1.report.durationMs }, "no demo report names \(function)")
        }
    }

    /// Runs the demo once per test process (about 7 s).
    static let shared: Result<Run, any Error> = Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "stallreport-viz-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let run = try StallReportCLI.run(
            ["--output", directory.path, "--threshold-ms", "250"], timeout: 120, executable: "stall-demo")
        guard run.status == 0 else { throw DemoFailed(description: "stall-demo failed: \(run)") }
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }
            .sorted()
        let reports = try files.map { file in
            let path = directory.appendingPathComponent(file).path
            return (path, try StallReport.read(from: URL(fileURLWithPath: path)))
        }
        guard reports.count >= 5 else {
            throw DemoFailed(description: "stall-demo wrote \(reports.count) reports: \(run)")
        }
        return Run(process: run, directory: directory, reports: reports)
    }

    struct DemoFailed: Error, CustomStringConvertible {
        var description: String
    }

    /// The shared run, or the reason it failed.
    static func run() throws -> Run {
        try shared.get()
    }
}
