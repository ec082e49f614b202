import ArgumentParser
import Foundation
import StallReportKit

/// `stallreport summarize`: stalls grouped by fingerprint, worst first.
struct SummarizeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "summarize",
        abstract: "Group stalls by fingerprint and show counts, durations and stacks, worst first.",
        discussion: """
        For each fingerprint: count, total stall time, p50/p95/p99/max duration (nearest-rank \
        percentiles: the value at rank ceil(p/100 × n) of the sorted durations), first and last \
        seen, classification mix, the representative stack (the app's own frames when there are \
        any: symbol and file:line) and the path of its longest stall's report. Fingerprints are \
        sorted by total stall time. Overall: reports, distinct stalls, total stall time, the worst \
        stall, fatal and in-progress stalls, and a histogram of durations.

        FORMATS
          text      aligned table (colour only on a terminal, never when NO_COLOR is set)
          json      stable keys for other tools (formatVersion 1; see \
        Reports/stallreport-summary.schema.json): formatVersion, kind, filters{since,until,minDurationMs}, \
        totals{files,reportsRead,filteredOut,stalls,fingerprints,totalMs,ended,inProgress,fatal,problems}, \
        worst{fingerprint,durationMs,startedAt,status,classification,report}, histogram[{lowerMs,upperMs,count}], \
        fingerprints[{fingerprint,count,totalMs,p50Ms,p95Ms,p99Ms,maxMs,firstSeen,lastSeen,classifications,statuses,stack[{symbol,file,line,inApp}],syscall,exampleReport}], \
        omittedFingerprints, problems[{path,message}]
          markdown  for a CI job summary

        EXAMPLES
          stallreport summarize .stall-reports
          stallreport summarize --top 3 --min-duration 500 --since 2026-03-01 reports/ old/one.json
          stallreport summarize --format json .stall-reports | jq '.fingerprints[0]'
          stallreport summarize --format markdown .stall-reports >> "$GITHUB_STEP_SUMMARY"
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
