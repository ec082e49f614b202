import ArgumentParser
import Foundation

/// `stall-bench generate-reports`: many realistic reports from a few real ones (figure 8's input).
struct GenerateReports: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate-reports",
        abstract: "Write COUNT reports copied from real ones with new ids, fingerprints, durations and start times.")

    @Option(help: "Directory of real reports to copy (e.g. from stall-demo).")
    var from: String

    @Option(help: "How many reports to write.")
    var count: Int = 10_000

    @Option(help: "Distinct fingerprints (skewed: a few are common).")
    var fingerprints: Int = 200

    @Option(name: .shortAndLong, help: "Directory to write into (created if missing).")
    var output: String

    func validate() throws {
        guard count > 0, fingerprints > 0 else { throw ValidationError("--count and --fingerprints must be positive") }
    }

    func run() throws {
        let generator = try ReportGenerator(
            templatesIn: URL(fileURLWithPath: from, isDirectory: true), fingerprintCount: fingerprints)
        let bytes = try generator.write(count: count, into: URL(fileURLWithPath: output, isDirectory: true))
        print("wrote \(count) reports (\(bytes / 1_048_576) MiB) to \(output)")
    }
}
