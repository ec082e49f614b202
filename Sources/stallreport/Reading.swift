import ArgumentParser
import Foundation
import StallReportKit

/// Reads reports for a subcommand and applies the common rules: each problem is one stderr line;
/// `--strict` turns problems into exit status 2; no valid report at all is exit status 2 unless
/// `--allow-empty` or a valid session record was read (the monitor ran and saw no stall).
enum Reading {
    /// The outcome of reading, with problems already printed.
    struct Outcome {
        /// The folded reports.
        var collection: ReportCollection
        /// Whether `--strict` must fail the command once its output is written.
        var strictFailure: Bool
        /// Paths given that do not exist: exit status 3 once the output is written.
        var missingPaths: [String] = []
    }

    /// Reads `paths`, printing problems; throws exit status 2 when nothing valid was read and
    /// `requireReports` (unless `--allow-empty`).
    static func collect(
        _ paths: [String], options: ReadingOptions, filter: RecordFilter, grouping: SummaryGrouping = .fingerprint,
        label: String? = nil, requireReports: Bool = true
    ) throws -> Outcome {
        let collection = options.collector(filter: filter, grouping: grouping).collect(paths)
        printProblems(collection.problems)
        let missing = MissingPaths.among(paths)
        if requireReports && collection.reportsRead == 0
            && collection.blockingCalls.reportsRead + collection.blockingCalls.reportsFilteredOut == 0
            && !collection.hasSessions && (!options.allowEmpty || !missing.isEmpty)
        {
            throw nothingRead(filesFound: collection.filesFound, in: paths, label: label, missing: missing)
        }
        return Outcome(
            collection: collection, strictFailure: options.strict && !collection.problems.isEmpty, missingPaths: missing
        )
    }

    /// Throws exit status 3 after output when a path given does not exist, else exit status 2
    /// when `--strict` found problems.
    static func finish(_ outcomes: [Outcome]) throws {
        let missing = outcomes.flatMap(\.missingPaths)
        if !missing.isEmpty { throw MissingPaths.failure(missing) }
        let problems = outcomes.reduce(0) { $0 + $1.collection.problems.count }
        if outcomes.contains(where: \.strictFailure) {
            throw strictFailure(files: "\(problems) file\(problems == 1 ? "" : "s")")
        }
    }

    /// Prints each problem as one stderr line.
    static func printProblems(_ problems: [ReportProblem]) {
        for problem in problems { Output.note(problem.description) }
    }

    /// Says that no valid report was found in `paths` (the `label`led side, if any) and returns
    /// exit status 2 to throw; exit status 3, without suggesting `--allow-empty`, when some of
    /// `missing` (paths that do not exist) were given.
    static func nothingRead(
        filesFound: Int, in paths: [String], label: String? = nil, missing: [String] = []
    ) -> ExitCode {
        let side = label.map { " (\($0))" } ?? ""
        let what =
            filesFound == 0
            ? "no report files found"
            : "no valid report among the \(filesFound) file\(filesFound == 1 ? "" : "s") found"
        if !missing.isEmpty {
            Output.note("error: \(what)\(side) in \(paths.joined(separator: " "))")
            return MissingPaths.failure(missing)
        }
        return Output.inputError(
            "\(what)\(side) in \(paths.joined(separator: " ")); pass --allow-empty if no reports means no stalls")
    }

    /// Says that `files` (e.g. "3 files") could not be used under `--strict` and returns exit
    /// status 2 to throw.
    static func strictFailure(files: String) -> ExitCode {
        Output.inputError("\(files) could not be used and --strict was given")
    }
}
