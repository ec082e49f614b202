import ArgumentParser
import Foundation
import StallReportKit

/// The option groups every subcommand that reads sets of reports ends with, in the order the help
/// shows them: the time window, how names are shown, and how files are read.
struct ReportInputOptions: ParsableArguments {
    @OptionGroup(title: "Time window")
    var window: TimeWindowOptions

    @OptionGroup(title: "Names")
    var names: NameOptions

    @OptionGroup(title: "Reading")
    var reading: ReadingOptions

    /// The filter of the time window and, when given, a shortest duration.
    func filter(minDurationMs: Double?) -> RecordFilter {
        window.filter(minDurationMs: minDurationMs)
    }

    /// Reads `paths` as records of the stalls that pass `filter`, with the rules of
    /// ``Reading/collect(_:options:filter:grouping:label:requireReports:)``.
    func collect(
        _ paths: [String], filter: RecordFilter, grouping: SummaryGrouping = .fingerprint,
        label: String? = nil, requireReports: Bool = true
    ) throws -> Reading.Outcome {
        try Reading.collect(
            paths, options: reading, filter: filter, grouping: grouping, label: label, requireReports: requireReports)
    }
}

/// What export and flamegraph read: `--fingerprint` and `--min-duration`, then the common groups.
struct ProfileInputOptions: ParsableArguments {
    @OptionGroup(title: "Filters")
    var filters: ProfileFilterOptions

    @OptionGroup
    var input: ReportInputOptions

    /// How frame names are shown.
    var names: FrameNameStyle { input.names.style }

    /// Reads `paths` as the profiles of the stalls that pass the filters and the time window.
    func read(_ paths: [String]) throws -> ProfileReading.Outcome<StallProfile> {
        try read(paths, reducing: StallProfile.init(report:path:), sampleCount: \.samples.count)
    }

    /// The same, keeping `reduce(report, path)` of each matching report.
    func read<Item: Sendable>(
        _ paths: [String], reducing reduce: @escaping @Sendable (StallReport, String) -> Item,
        sampleCount: (Item) -> Int
    ) throws -> ProfileReading.Outcome<Item> {
        try ProfileReading.read(
            paths, options: input.reading, filter: filter, fingerprints: filters.fingerprints,
            reducing: reduce, sampleCount: sampleCount)
    }

    private var filter: RecordFilter { input.filter(minDurationMs: filters.minDuration) }
}
