import Foundation
import StallReportKit
import StallReportModel

extension ProfileInputOptions {
    /// Reads the blocking-calls reports (`blocking-*.json`) among `paths` whose interval starts in
    /// the time window, with the rules of ``ProfileReading/read(_:options:filter:fingerprints:reducing:sampleCount:)``:
    /// each file that cannot be used is one stderr line, none read is exit status 2 unless
    /// `--allow-empty`, a path that does not exist exit status 3 once the output is written. The
    /// outcome's items are the call sites kept (``ProfileFilterOptions/fingerprints``), its
    /// samples their calls.
    func readBlockingCalls(_ paths: [String]) throws -> ProfileReading.Outcome<BlockingCallsReport> {
        let options = input.reading
        let scan = ReportScanner(reportEmptyDirectories: false).scan(paths)
        var problems = scan.problems
        let file = DocumentFile(maxFileSize: options.maxFileSize * 1024 * 1024)
        let window = input.filter(minDurationMs: nil)
        var reports: [BlockingCallsReport] = []
        var valid = 0
        for path in scan.blockingFiles {
            switch BlockingCallsReport.read(path: path, file: file) {
            case .success(let report):
                valid += 1
                if window.admitsStart(report.startedAt) { reports.append(report) }
            case .failure(let error): problems.append(ReportProblem(path: path, message: error.description))
            }
        }
        Reading.printProblems(problems)
        let missing = MissingPaths.among(paths)
        if valid == 0 && (!options.allowEmpty || !missing.isEmpty) {
            throw Reading.nothingRead(
                filesFound: scan.blockingFiles.count, in: paths, label: "blocking-calls reports", missing: missing)
        }
        let fingerprints = Set(filters.fingerprints)
        let kept = reports.map { report in
            var report = report
            report.callSites = report.callSites.filter { fingerprints.isEmpty || fingerprints.contains($0.fingerprint) }
            return report
        }.sorted { $0.startedAt < $1.startedAt }
        let sites = kept.flatMap(\.callSites)
        if valid > 0 && sites.isEmpty {
            Output.note("no blocking call site matched the filters (\(valid) report\(valid == 1 ? "" : "s") read)")
        }
        return ProfileReading.Outcome(
            profiles: kept, sampleCount: sites.map(\.count).reduce(0, +),
            strictFailure: options.strict && !problems.isEmpty, missingPaths: missing,
            itemNoun: "blocking-calls report",
            sampleNoun: "calls")
    }
}
