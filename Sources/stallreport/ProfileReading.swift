import ArgumentParser
import Foundation
import StallReportKit

/// Reads whole reports as profiles for export and flamegraph, with the same rules as ``Reading``:
/// each problem is one stderr line, no valid report at all is exit status 2 unless
/// `--allow-empty`, and `--strict` turns problems into exit status 2 once output is written.
enum ProfileReading {
    /// The outcome, with problems already printed.
    struct Outcome<Item> {
        /// The matching reports' items (profiles), oldest first.
        var profiles: [Item]
        /// Number of samples in them.
        var sampleCount: Int
        /// Whether `--strict` must fail the command.
        var strictFailure: Bool
        /// Paths given that do not exist: exit status 3 once the output is written.
        var missingPaths: [String] = []
        /// What the items and the samples are called in the confirmation (`3 stalls (120 samples)`).
        var itemNoun = "stall"
        var sampleNoun = "samples"
    }

    /// Reads `paths`, keeping `reduce(report, path)` of each report whose stall passes `filter` and
    /// has one of `fingerprints` (any, when empty), printing problems; throws exit status 2 when
    /// nothing valid was read.
    static func read<Item: Sendable>(
        _ paths: [String], options: ReadingOptions, filter: RecordFilter, fingerprints: [String],
        reducing reduce: @escaping @Sendable (StallReport, String) -> Item,
        sampleCount: (Item) -> Int
    ) throws -> Outcome<Item> {
        let reader = ProfileReader(
            loader: ReportLoader(maxFileSize: options.maxFileSize * 1024 * 1024), filter: filter,
            fingerprints: Set(fingerprints), workers: options.jobs, reportEmptyDirectories: !options.allowEmpty)
        let result = reader.read(paths, reducing: reduce)
        Reading.printProblems(result.problems)
        let missing = MissingPaths.among(paths)
        if result.reportsRead == 0 && (!options.allowEmpty || !missing.isEmpty) {
            throw Reading.nothingRead(filesFound: result.filesFound, in: paths, missing: missing)
        }
        if result.reportsRead > 0 && result.items.isEmpty {
            Output.note(
                "no stall matched the filters (\(result.reportsRead) report\(result.reportsRead == 1 ? "" : "s") read)")
        }
        return Outcome(
            profiles: result.items, sampleCount: result.items.map(sampleCount).saturatingSum(),
            strictFailure: options.strict && !result.problems.isEmpty, missingPaths: missing)
    }

    /// Writes the rendered `data` to `output` (exit status 2 if it cannot), says what was written
    /// (`wrote <what> of 3 stalls (120 samples) to <output>`) unless it went to stdout, then
    /// throws exit status 3 when a path given does not exist, else exit status 2 when `--strict`
    /// found problems.
    static func deliver<Item>(_ data: Data, as what: String, to output: String, from outcome: Outcome<Item>) throws {
        try Output.save(data, to: output, confirming: confirmation(what, outcome))
        try finish(outcome)
    }

    /// The same for output produced in chunks (handed to the sink `produce` gets), streamed to
    /// `output` as it comes (``OutputDestination/stream(to:_:)``).
    static func deliver<Item>(
        as what: String, to output: String, from outcome: Outcome<Item>,
        produce: ((Data) throws -> Void) throws -> Void
    ) throws {
        do {
            try OutputDestination.stream(to: output, produce)
        } catch {
            throw Output.inputError("cannot write \(output): \((error as NSError).localizedDescription)")
        }
        if output != "-" { Output.stdout("wrote \(confirmation(what, outcome)) to \(output)\n") }
        try finish(outcome)
    }

    /// `<what> of 3 stalls (120 samples)`.
    private static func confirmation<Item>(_ what: String, _ outcome: Outcome<Item>) -> String {
        let items = outcome.profiles.count
        return
            "\(what) of \(items) \(outcome.itemNoun)\(items == 1 ? "" : "s") (\(outcome.sampleCount) \(outcome.sampleNoun))"
    }

    /// Throws exit status 3 when a path given does not exist, else 2 when `--strict` found problems.
    private static func finish<Item>(_ outcome: Outcome<Item>) throws {
        if !outcome.missingPaths.isEmpty { throw MissingPaths.failure(outcome.missingPaths) }
        if outcome.strictFailure { throw Reading.strictFailure(files: "some files") }
    }
}

/// `--fingerprint` and `--min-duration`, shared by export and flamegraph.
struct ProfileFilterOptions: ParsableArguments {
    @Option(
        name: .customLong("fingerprint"),
        help: ArgumentHelp("Only stalls with this fingerprint (repeat for several).", valueName: "fingerprint"))
    var fingerprints: [String] = []

    @Option(help: ArgumentHelp("Only stalls lasting at least this many milliseconds.", valueName: "ms"))
    var minDuration: Double?

    func validate() throws {
        try validateMilliseconds(minDuration, "--min-duration")
    }
}
