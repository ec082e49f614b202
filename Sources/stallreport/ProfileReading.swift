import ArgumentParser
import Foundation
import StallReportKit

/// Reads whole reports as profiles for export and flamegraph, with the same rules as ``Reading``:
/// each problem is one stderr line, no valid report at all is exit status 2 unless
/// `--allow-empty`, and `--strict` turns problems into exit status 2 once output is written.
enum ProfileReading {
    /// The outcome, with problems already printed.
    struct Outcome {
        /// The matching reports' profiles, oldest first.
        var profiles: [StallProfile]
        /// Whether `--strict` must fail the command.
        var strictFailure: Bool
    }

    static func read(_ paths: [String], options: ReadingOptions, filter: RecordFilter, fingerprints: [String]) throws -> Outcome {
        let reader = ProfileReader(loader: ReportLoader(maxFileSize: options.maxFileSize * 1024 * 1024), filter: filter,
                                   fingerprints: Set(fingerprints), workers: options.jobs, reportEmptyDirectories: !options.allowEmpty)
        let result = reader.read(paths)
        for problem in result.problems { Output.note(problem.description) }
        if result.reportsRead == 0 && !options.allowEmpty {
            let what = result.filesFound == 0 ? "no report files found" : "no valid report among the \(result.filesFound) file\(result.filesFound == 1 ? "" : "s") found"
            Output.note("error: \(what) in \(paths.joined(separator: " ")); pass --allow-empty if no reports means no stalls")
            throw ExitCode(ExitStatus.inputError)
        }
        if result.reportsRead > 0 && result.profiles.isEmpty {
            Output.note("no stall matched the filters (\(result.reportsRead) report\(result.reportsRead == 1 ? "" : "s") read)")
        }
        return Outcome(profiles: result.profiles, strictFailure: options.strict && !result.problems.isEmpty)
    }

    /// Throws exit status 2 after output when `--strict` found problems.
    static func finish(_ outcome: Outcome) throws {
        if outcome.strictFailure {
            Output.note("error: some files could not be used and --strict was given")
            throw ExitCode(ExitStatus.inputError)
        }
    }
}

/// `--fingerprint` and `--min-duration`, shared by export and flamegraph.
struct ProfileFilterOptions: ParsableArguments {
    @Option(name: .customLong("fingerprint"), help: ArgumentHelp("Only stalls with this fingerprint (repeat for several).", valueName: "fingerprint"))
    var fingerprints: [String] = []

    @Option(help: ArgumentHelp("Only stalls lasting at least this many milliseconds.", valueName: "ms"))
    var minDuration: Double?

    func validate() throws {
        try validateMilliseconds(minDuration, "--min-duration")
    }
}
