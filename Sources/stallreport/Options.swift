import ArgumentParser
import Foundation
import StallReportKit

/// How report files are read: shared by every subcommand.
struct ReadingOptions: ParsableArguments {
    @Flag(
        help:
            "Fail with exit status 2 when any file cannot be used (by default such files are reported on stderr and skipped)."
    )
    var strict = false

    @Flag(
        help:
            "Accept an existing directory without reports (no reports means no stalls) instead of failing with exit status 2. A path that does not exist is still an error (exit status 3)."
    )
    var allowEmpty = false

    @Option(
        help: ArgumentHelp("Largest report file read, in MiB; bigger files are reported and skipped.", valueName: "MiB")
    )
    var maxFileSize: Int = ReportLoader.defaultMaxFileSize / (1024 * 1024)

    @Option(help: ArgumentHelp("Number of parallel readers (default: one per core).", valueName: "n"))
    var jobs: Int?

    func validate() throws {
        guard maxFileSize >= 1 else { throw ValidationError("--max-file-size must be at least 1 (MiB)") }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
    }

    /// A collector for these options, the given filter and grouping.
    func collector(filter: RecordFilter, grouping: SummaryGrouping = .fingerprint) -> ReportCollector {
        ReportCollector(
            loader: ReportLoader(maxFileSize: maxFileSize * 1024 * 1024), filter: filter, workers: jobs,
            reportEmptyDirectories: !allowEmpty, grouping: grouping)
    }
}

/// `--since` / `--until`: a time window on when stalls started.
struct TimeWindowOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Only stalls that started at or after this time (ISO 8601: 2026-03-01 or 2026-03-01T12:00:00Z).",
            valueName: "date"),
        transform: TimeWindowOptions.parse)
    var since: Date?

    @Option(
        help: ArgumentHelp("Only stalls that started before this time (ISO 8601).", valueName: "date"),
        transform: TimeWindowOptions.parse)
    var until: Date?

    static func parse(_ text: String) throws -> Date {
        guard let date = RecordFilter.parseDate(text) else {
            throw ValidationError("'\(text)' is not an ISO 8601 date (e.g. 2026-03-01 or 2026-03-01T12:00:00Z)")
        }
        return date
    }

    func validate() throws {
        if let since, let until, since >= until { throw ValidationError("--since must be before --until") }
    }

    /// The filter of this window and, when given, a shortest duration.
    func filter(minDurationMs: Double?) -> RecordFilter {
        RecordFilter(since: since, until: until, minDurationMs: minDurationMs)
    }
}

extension SummaryGrouping: ExpressibleByArgument {}

/// Output format of summarize and diff.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json, markdown
}

/// `--color`: whether text output is coloured.
struct ColorOptions: ParsableArguments {
    @Option(help: "Colour text output: auto (on a terminal), always, never. NO_COLOR always disables colour.")
    var color: ColorChoice = .auto

    /// The style to use; `NO_COLOR` (non-empty) always wins.
    func style() -> TextStyle { color.style() }
}

/// When to colour text output.
enum ColorChoice: String, ExpressibleByArgument, CaseIterable {
    case auto, always, never

    /// The style to use; `NO_COLOR` (non-empty) always wins.
    func style() -> TextStyle {
        let environment = ProcessInfo.processInfo.environment
        switch self {
        case .never: return .plain
        case .always: return TextStyle(colors: !TextStyle.noColor(environment))
        case .auto: return .automatic(isTerminal: Output.stdoutIsTerminal, environment: environment)
        }
    }
}

/// Regression policy flags shared by gate (with a baseline) and diff.
struct RegressionOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Relative tolerance before a count or p95 increase is a regression (0.25 = 25 %; default 0.25).",
            valueName: "fraction"))
    var tolerance: Double?

    @Option(
        help: ArgumentHelp(
            "Fewest occurrences of a new or regressed fingerprint for it to fail; fewer is a warning (default 1).",
            valueName: "n"))
    var minOccurrences: Int?

    func validate() throws {
        if let tolerance, !(tolerance >= 0 && tolerance.isFinite) {
            throw ValidationError("--tolerance must be 0 or more (e.g. 0.25)")
        }
        if let minOccurrences, minOccurrences < 1 { throw ValidationError("--min-occurrences must be at least 1") }
    }
}

/// Throws the usage error of a command run without any report path.
func requirePaths(_ paths: [String]) throws {
    if paths.isEmpty { throw ValidationError("give at least one report file or directory") }
}

/// The report paths of a command that reads them (at least one).
struct ReportPaths: ParsableArguments {
    @Argument(
        help: ArgumentHelp("Report files and/or directories (searched recursively for *.json).", valueName: "path"))
    var paths: [String] = []

    func validate() throws {
        try requirePaths(paths)
    }
}

/// Throws a usage error naming `flag` unless `value` is nil or a finite number of milliseconds, 0 or more.
func validateMilliseconds(_ value: Double?, _ flag: String) throws {
    if let value, !(value >= 0 && value.isFinite) {
        throw ValidationError("\(flag) must be a number of milliseconds, 0 or more")
    }
}

/// `--full-names`: how frame names are shown by the commands that show them.
struct NameOptions: ParsableArguments {
    @Flag(
        help:
            "Show full demangled names (module prefixes, argument and return types) instead of simplified ones such as 'static Scenarios.spinOnCPU(milliseconds:)'. Reports and JSON output always keep the full names."
    )
    var fullNames = false

    /// The style these options ask for.
    var style: FrameNameStyle { fullNames ? .full : .simplified }
}
