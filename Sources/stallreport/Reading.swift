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
    }

    /// Reads `paths`, printing problems; throws exit status 2 when nothing valid was read and
    /// `requireReports` (unless `--allow-empty`).
    static func collect(_ paths: [String], options: ReadingOptions, filter: RecordFilter, grouping: SummaryGrouping = .fingerprint,
                        label: String? = nil, requireReports: Bool = true) throws -> Outcome {
        let collection = options.collector(filter: filter, grouping: grouping).collect(paths)
        for problem in collection.problems {
            Output.note(problem.description)
        }
        if requireReports && collection.reportsRead == 0 && !collection.hasSessions && !options.allowEmpty {
            let side = label.map { " (\($0))" } ?? ""
            let what = collection.filesFound == 0 ? "no report files found" : "no valid report among the \(collection.filesFound) file\(collection.filesFound == 1 ? "" : "s") found"
            Output.note("error: \(what)\(side) in \(paths.joined(separator: " ")); pass --allow-empty if no reports means no stalls")
            throw ExitCode(ExitStatus.inputError)
        }
        return Outcome(collection: collection, strictFailure: options.strict && !collection.problems.isEmpty)
    }

    /// Throws exit status 2 after output when `--strict` found problems.
    static func finish(_ outcomes: [Outcome]) throws {
        let problems = outcomes.reduce(0) { $0 + $1.collection.problems.count }
        if outcomes.contains(where: \.strictFailure) {
            Output.note("error: \(problems) file\(problems == 1 ? "" : "s") could not be used and --strict was given")
            throw ExitCode(ExitStatus.inputError)
        }
    }
}
