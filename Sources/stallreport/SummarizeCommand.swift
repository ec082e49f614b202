import ArgumentParser
import Foundation
import StallReportKit

/// `stallreport summarize`: stalls grouped by fingerprint (or scene), worst first, with stall
/// rates when session records are found.
struct SummarizeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "summarize",
        abstract:
            "Group stalls by fingerprint (or scene) and show counts, durations, stacks and stall rates, worst first.",
        discussion: """
            For each fingerprint: count, total stall time, p50/p95/p99/max duration,
            first and last seen, classification mix, the representative stack (the
            app's own frames when there are any: symbol and file:line) and the path of
            its longest stall's report. Fingerprints are sorted by total stall time.
            Overall: reports, distinct stalls, total stall time, worst stall, fatal
            and in-progress stalls (counted, fatal separately), a duration histogram.
            Fatal stalls (the process died during the stall, including inProgress
            reports of processes that no longer run) are counted per group and overall.
            Compact rate-limited reports count like full ones.

            STALL RATE  (when session records, *.session, are found next to the reports)
            The monitor writes one session-<time>-p<pid>.session per process. The
            summary then shows stalls and stall time per monitored hour (overall and
            per group), monitored hours (monitoredMs of cleanly stopped sessions,
            for the others aliveMs or lastHeartbeatAt - startedAt, whichever is
            later), the number of sessions, those that ended without a clean stop
            (crashed or killed) and the reports the monitors dropped, by reason. With --since/--until only the part of each
            session inside the window counts as monitored time. A broken session file
            is a problem line on stderr like a broken report.
            Schema: Reports/stall-session.schema.json

            GROUPING  (--group-by)
              fingerprint  one group per stack fingerprint (default)
              scene        one group per scene the app set (monitor.scene: screen,
                           request, test name); stalls without one are "(no scene)"
              loop         one group per loop: kind and thread ("nioEventLoop
                           NIO-ELT-0-#1", "runLoop stall-demo"), a row per event loop

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
              and, when they apply (absent otherwise):
                totals.rateLimited  stalls from compact, rate-limited reports
                fingerprints[].stallsPerHour, .stallMsPerHour  with session records
                groupBy ("scene"), scenes[], omittedScenes  with --group-by scene;
                             scenes[] has the fingerprint keys with scene (absent
                             for no scene), fingerprints (distinct count) and
                             worstFingerprint instead of fingerprint
                groupBy ("loop"), loops[], omittedLoops  with --group-by loop;
                             loops[] has the keys of scenes[] with kind and thread
                             instead of scene
                sessions     sessions, cleanlyStopped, endedUncleanly, running,
                             filteredOut, monitoredMs, monitoredHours, stallsPerHour,
                             stallMsPerHour, fatalPerHour, stalledFraction,
                             stallsRecorded, spans, reportsWritten,
                             reportsDropped{reason: n}, reportsDroppedTotal,
                             stallsWithoutSession, firstStartedAt, lastEndedAt,
                             uncleanSessions[]
                blockingCalls  with blocking-calls reports (blocking-*.json): reports,
                             filteredOut, calls, totalMs, droppedCalls,
                             omittedCallSites, omittedFromSummary, callSites[]
                             {fingerprint, call, loopKind, callSite, count, totalMs,
                             maxMs, p50Ms, p95Ms, reports, example}, most blocked
                             first

            EXAMPLES
              stallreport summarize .stall-reports
              stallreport summarize --top 3 --min-duration 500 reports/ old/one.json
              stallreport summarize --since 2026-03-01 --until 2026-03-08 reports/
              stallreport summarize --format json .stall-reports | jq '.totals'
              stallreport summarize --group-by scene .stall-reports
              stallreport summarize --format json .stall-reports | jq '.sessions'
              stallreport summarize --format json .stall-reports | jq '.blockingCalls'
              stallreport summarize --format markdown .stall-reports \\
                >> "$GITHUB_STEP_SUMMARY"
            """
    )

    @Argument(
        help: ArgumentHelp(
            "Report files and/or directories (searched recursively for *.json reports and *.session records).",
            valueName: "path"))
    var paths: [String] = []

    @Option(help: "Output format.")
    var format: OutputFormat = .text

    @Option(
        help: ArgumentHelp(
            "Group stalls by fingerprint, by the scene the app set, or by loop (kind and thread).",
            valueName: "fingerprint|scene|loop"))
    var groupBy: SummaryGrouping = .fingerprint

    @Option(help: ArgumentHelp("Show only the N groups with the most total stall time.", valueName: "n"))
    var top: Int?

    @Option(help: ArgumentHelp("Only stalls lasting at least this many milliseconds.", valueName: "ms"))
    var minDuration: Double?

    @OptionGroup
    var color: ColorOptions

    @Flag(
        help:
            "Text: all table columns (P50, P99, stall time per hour, first and last seen) instead of the compact table that fits 120 columns."
    )
    var wide = false

    @OptionGroup
    var input: ReportInputOptions

    func validate() throws {
        try requirePaths(paths)
        if let top, top < 1 { throw ValidationError("--top must be at least 1") }
        try validateMilliseconds(minDuration, "--min-duration")
    }

    func run() throws {
        let filter = input.filter(minDurationMs: minDuration)
        let outcome = try input.collect(paths, filter: filter, grouping: groupBy)
        let summary = Summary(collection: outcome.collection, filter: filter, top: top)
        switch format {
        case .text:
            let renderer = SummaryTextRenderer(
                style: color.style(), names: input.names.style, wide: wide, width: TerminalWidth.current())
            Output.stdout(renderer.render(summary))
        case .markdown: Output.stdout(SummaryMarkdownRenderer(names: input.names.style).render(summary))
        case .json: Output.stdout(try SummaryJSON(summary).encoded())
        }
        try Reading.finish([outcome])
    }
}
