import Foundation

/// Reads every report and session record under a set of paths in parallel and folds them into a
/// ``ReportCollection``.
///
/// Files are found first (`ReportScanner`). Session records (`*.session`, one per monitored
/// process, small) are read first, so that each stall can be matched to its process's session.
/// Then a fixed pool of workers (one per core by default) takes report files from a shared
/// counter, reduces each to a `StallRecord` (`FastRecordReader`: straight from the bytes, or
/// with the full ``ReportLoader`` whenever the file is anything but a plain valid report) and
/// folds it into the worker's own per-group accumulators at once; no report is kept. Memory therefore grows with
/// the number of groups and durations, not with the size or number of reports. The workers'
/// results are merged at the end (`WorkerPool`: no lock).
public struct ReportCollector: Sendable {
    /// How each file is read.
    package var loader: ReportLoader
    /// Which stalls take part.
    package var filter: RecordFilter
    /// Number of worker threads.
    package var workers: Int
    /// Whether a directory with no `*.json` (nor `*.session`) file is a problem.
    package var reportEmptyDirectories: Bool
    /// How stalls are grouped.
    package var grouping: SummaryGrouping

    /// Creates a collector; `workers` defaults to the number of active cores.
    public init(
        loader: ReportLoader = ReportLoader(), filter: RecordFilter = RecordFilter(), workers: Int? = nil,
        reportEmptyDirectories: Bool = true, grouping: SummaryGrouping = .fingerprint
    ) {
        self.loader = loader
        self.filter = filter
        self.workers = max(1, workers ?? ProcessInfo.processInfo.activeProcessorCount)
        self.reportEmptyDirectories = reportEmptyDirectories
        self.grouping = grouping
    }

    /// Scans `paths` and reads every report and session record found.
    public func collect(_ paths: [String]) -> ReportCollection {
        let scan = ReportScanner(reportEmptyDirectories: reportEmptyDirectories).scanCompact(paths)
        var result = read(files: scan.files, sessionFiles: scan.sessionFiles)
        let (blocking, blockingProblems) = readBlockingCalls(scan.blockingFiles)
        result.blockingCalls = blocking
        result.problems += blockingProblems
        result.problems = (scan.problems + result.problems).sorted { ($0.path, $0.message) < ($1.path, $1.message) }
        return result
    }

    /// Reads the given report files and session record files (already found) in parallel.
    package func read(files: [String], sessionFiles: [String] = []) -> ReportCollection {
        var list = FileList()
        let directory = list.addDirectory("")
        for file in files { list.append(name: file, directory: directory) }
        return read(files: list, sessionFiles: sessionFiles)
    }

    private func read(files: FileList, sessionFiles: [String]) -> ReportCollection {
        let sessionLoader = SessionLoader(maxFileSize: loader.maxFileSize, maxNestingDepth: loader.maxNestingDepth)
        let sessionResults = parallelMap(sessionFiles) { sessionLoader.load(path: $0) }
        var sessions = SessionTotals()
        var sessionProblems: [ReportProblem] = []
        var records: [SessionRecord] = []
        for (path, outcome) in zip(sessionFiles, sessionResults) {
            switch outcome {
            case .success(let record):
                records.append(record)
                sessions.add(record, path: path, since: filter.since, until: filter.until)
            case .failure(let error):
                sessionProblems.append(ReportProblem(path: path, message: error.description))
            }
        }
        let index = SessionIndex(records)

        // Zero-sized items: the queue only hands out indices into `files`.
        let queue = WorkQueue([Void](repeating: (), count: files.count))
        let loader = self.loader
        let filter = self.filter
        let grouping = self.grouping
        let locals = WorkerPool.run(workers: min(workers, max(1, files.count))) { _ in
            var local = ReportCollection(grouping: grouping)
            var reader = FastRecordReader(loader: loader)
            defer { reader.release() }
            while let number = queue.nextIndex() {
                let path = files.path(at: number)
                switch reader.record(path: path) {
                case .success(let record):
                    local.add(record, filter: filter, sessionIndex: index)
                case .failure(let error):
                    local.problems.append(ReportProblem(path: path, message: error.description))
                }
            }
            return local
        }
        var result = ReportCollection(grouping: grouping)
        for local in locals { result.merge(local) }
        result.filesFound = files.count
        result.sessionFilesFound = sessionFiles.count
        result.sessions = sessions
        result.problems += sessionProblems
        result.problems.sort { ($0.path, $0.message) < ($1.path, $1.message) }
        return result
    }

    /// Reads the blocking-calls reports (few and small: one per monitored process and interval)
    /// and folds them by call site; a file that cannot be used is a problem, the others still count.
    package func readBlockingCalls(_ paths: [String]) -> (BlockingCallSites, [ReportProblem]) {
        let file = DocumentFile(maxFileSize: loader.maxFileSize, maxNestingDepth: loader.maxNestingDepth)
        let outcomes = parallelMap(paths) { BlockingCallsReport.read(path: $0, file: file) }
        var sites = BlockingCallSites()
        sites.filesFound = paths.count
        var problems: [ReportProblem] = []
        for (path, outcome) in zip(paths, outcomes) {
            switch outcome {
            case .success(let report): sites.add(report, path: path, filter: filter)
            case .failure(let error): problems.append(ReportProblem(path: path, message: error.description))
            }
        }
        return (sites, problems)
    }

    /// `transform` applied to every element on the worker pool, results in input order.
    private func parallelMap<T: Sendable>(_ items: [String], _ transform: @escaping @Sendable (String) -> T) -> [T] {
        guard !items.isEmpty else { return [] }
        let queue = WorkQueue(items)
        let parts = WorkerPool.run(workers: min(workers, items.count)) { _ in
            var part: [(index: Int, value: T)] = []
            while let index = queue.nextIndex() { part.append((index, transform(items[index]))) }
            return part
        }
        return parts.joined().sorted { $0.index < $1.index }.map(\.value)
    }
}
