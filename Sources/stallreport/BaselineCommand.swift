import ArgumentParser
import Foundation
import StallReportKit

/// `stallreport baseline`: records the known fingerprints for `gate --baseline`.
struct BaselineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "baseline",
        abstract: "Record the known stall fingerprints with their counts and durations.",
        discussion: """
            Writes a baseline file (JSON, baselineVersion 1): for each fingerprint its
            count, p50/p95/max and total duration in milliseconds, and its top frame
            for people reading the file. 'stallreport gate --baseline FILE' then fails
            on fingerprints that are new or regressed beyond a tolerance and reports
            fixed ones. Commit the file next to your code; re-record it when you
            accept a change. Use the same --min-duration here as --ignore-shorter-than
            in the gate. Example: Reports/stallreport-baseline.example.json.

            EXAMPLES
              stallreport baseline .stall-reports -o stall-baseline.json
              stallreport baseline --min-duration 300 run1/ run2/ -o stall-baseline.json
              stallreport baseline --allow-empty .stall-reports -o -    # to stdout
            """
    )

    @OptionGroup
    var source: ReportPaths

    @Option(
        name: [.short, .long], help: ArgumentHelp("Where to write the baseline ('-' for stdout).", valueName: "file"))
    var output: String = "stall-baseline.json"

    @Option(help: ArgumentHelp("Only stalls lasting at least this many milliseconds.", valueName: "ms"))
    var minDuration: Double?

    @OptionGroup(title: "Time window")
    var window: TimeWindowOptions

    @OptionGroup(title: "Reading")
    var reading: ReadingOptions

    func validate() throws {
        try validateMilliseconds(minDuration, "--min-duration")
    }

    func run() throws {
        let outcome = try Reading.collect(
            source.paths, options: reading, filter: window.filter(minDurationMs: minDuration))
        let blocking = outcome.collection.blockingCalls
        let baseline = Baseline(
            stats: outcome.collection.stats(), blockingCallSites: blocking.isEmpty ? nil : blocking.stats())
        let fingerprints = baseline.fingerprints.count
        try Output.save(
            try baseline.encoded(), to: output, what: "baseline",
            confirming:
                "baseline of \(fingerprints) fingerprint\(fingerprints == 1 ? "" : "s") (\(baseline.reports) stall\(baseline.reports == 1 ? "" : "s"))"
        )
        try Reading.finish([outcome])
    }
}
