import ArgumentParser
import Foundation
import StallReportKit

/// `stallreport summarize`: stalls grouped by fingerprint, worst first.
struct SummarizeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "summarize",
        abstract: "Group stalls by fingerprint and show counts, durations and stacks, worst first.",
        discussion: """
        For each fingerprint: count, total stall time, p50/p95/p99/max duration,
        first and last seen, classification mix, the representative stack (the
        app's own frames when there are any: symbol and file:line) and the path of
        its longest stall's report. Fingerprints are sorted by total stall time.
        Overall: reports, distinct stalls, total stall time, worst stall, fatal
        and in-progress stalls (counted, fatal separately), a duration histogram.

        Percentiles are nearest-rank: the value at rank ceil(p/100 * n) of the n
        sorted durations, always an observed duration (p95 of 20 stalls is the
        19th shortest; with fewer than 20 stalls p95 is the longest).

        FORMATS
          text      aligned table; colour only on a terminal, never with NO_COLOR
          markdown  for a CI job summary
          json      for other tools; stable keys (formatVersion 1, new keys may be
                    added; optional keys are left out when empty; durations in ms,
                    dates ISO 8601 UTC). Schema:
                    Reports/stallreport-summary.schema.json
            formatVersion, kind ("summary"), omittedFingerprints
            filters      since, until, minDurationMs
            totals       files, reportsRead, filteredOut, stalls, fingerprints,
                         totalMs, ended, inProgress, fatal, problems
            worst        fingerprint, durationMs, startedAt, status,
                         classification, report
            histogram[]  lowerMs, upperMs, count
            fingerprints[]  fingerprint, count, totalMs, p50Ms, p95Ms, p99Ms,
                         maxMs, firstSeen, lastSeen, classifications{cpu, blocked,
                         mixed, congestion}, statuses{ended, inProgress, fatal},
                         stack[]{symbol, file, line, inApp}, syscall, exampleReport
            problems[]   path, message

        EXAMPLES
          stallreport summarize .stall-reports
          stallreport summarize --top 3 --min-duration 500 reports/ old/one.json
          stallreport summarize --since 2026-03-01 --until 2026-03-08 reports/
          stallreport summarize --format json .stall-reports | jq '.totals'
          stallreport summarize --format markdown .stall-reports \\
            >> "$GITHUB_STEP_SUMMARY"
        """
    )

    @Argument(help: ArgumentHelp("Report files and/or directories (searched recursively for *.json).", valueName: "path"))
    var paths: [String] = []

    @Option(help: "Output format.")
    var format: OutputFormat = .text

    @Option(help: ArgumentHelp("Show only the N fingerprints with the most total stall time.", valueName: "n"))
    var top: Int?

    @Option(help: ArgumentHelp("Only stalls lasting at least this many milliseconds.", valueName: "ms"))
    var minDuration: Double?

    @Option(help: "Colour text output: auto (on a terminal), always, never. NO_COLOR always disables colour.")
    var color: ColorChoice = .auto

    @OptionGroup(title: "Time window")
    var window: TimeWindowOptions

    @OptionGroup(title: "Reading")
    var reading: ReadingOptions

    func validate() throws {
        if paths.isEmpty { throw ValidationError("give at least one report file or directory") }
        if let top, top < 1 { throw ValidationError("--top must be at least 1") }
        try validateMilliseconds(minDuration, "--min-duration")
    }

    func run() throws {
        let filter = RecordFilter(since: window.since, until: window.until, minDurationMs: minDuration)
        let outcome = try Reading.collect(paths, options: reading, filter: filter)
        let summary = Summary(collection: outcome.collection, filter: filter, top: top)
        switch format {
        case .text: Output.stdout(SummaryTextRenderer(style: color.style()).render(summary))
        case .markdown: Output.stdout(SummaryMarkdownRenderer().render(summary))
        case .json: Output.stdout(try SummaryJSON(summary).encoded())
        }
        try Reading.finish([outcome])
    }
}
