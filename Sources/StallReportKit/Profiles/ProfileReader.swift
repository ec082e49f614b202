import Foundation

/// Reads whole reports under a set of paths in parallel and keeps each one's ``StallProfile``.
///
/// Unlike ``ReportCollector`` (which keeps only per-fingerprint statistics), exports need every
/// sample, so each matching report is reduced to its profile (weighted stacks and a few facts) and
/// the decoded report is dropped at once. Files are found with `ReportScanner` and decoded with
/// ``ReportLoader``, with the same problem lines as the other subcommands.
public struct ProfileReader: Sendable {
    /// What was read.
    public struct Result: Sendable {
        /// Profiles of the matching reports, oldest stall first (then by path).
        public var profiles: [StallProfile]
        /// Paths that could not be used, sorted by path.
        public var problems: [ReportProblem]
        /// Candidate files found.
        package var filesFound: Int
        /// Files decoded as valid reports (before filtering).
        package var reportsRead: Int
        /// Valid reports that the filters left out.
        package var reportsFilteredOut: Int
    }

    /// How each file is read.
    package var loader: ReportLoader
    /// Time window and minimum duration.
    package var filter: RecordFilter
    /// When not empty, only reports with one of these fingerprints.
    package var fingerprints: Set<String>
    /// Number of worker threads.
    package var workers: Int
    /// Whether a directory with no `*.json` file is a problem.
    package var reportEmptyDirectories: Bool

    /// Creates a reader; `workers` defaults to the number of active cores.
    public init(
        loader: ReportLoader = ReportLoader(), filter: RecordFilter = RecordFilter(), fingerprints: Set<String> = [],
        workers: Int? = nil, reportEmptyDirectories: Bool = true
    ) {
        self.loader = loader
        self.filter = filter
        self.fingerprints = fingerprints
        self.workers = max(1, workers ?? ProcessInfo.processInfo.activeProcessorCount)
        self.reportEmptyDirectories = reportEmptyDirectories
    }

    /// Whether a report passes the filters.
    package func accepts(_ report: StallReport, path: String) -> Bool {
        accepts(
            StallRecord(
                fingerprint: report.fingerprint, durationMs: report.durationMs, startedAt: report.startedAt,
                status: report.status, classification: report.classification, path: path, stack: [], syscall: nil))
    }

    /// True when a report of this record passes the filters (fingerprint, time window, duration).
    func accepts(_ record: StallRecord) -> Bool {
        if !fingerprints.isEmpty && !fingerprints.contains(record.fingerprint) { return false }
        return filter.accepts(record)
    }

    /// What was read, each matching report reduced to an `Item`.
    public struct Reduced<Item: Sendable>: Sendable {
        /// The matching reports' items, oldest stall first (then by path).
        public var items: [Item]
        /// Paths that could not be used, sorted by path.
        public var problems: [ReportProblem]
        /// Candidate files found.
        package var filesFound: Int
        /// Files decoded as valid reports (before filtering).
        package var reportsRead: Int
        /// Valid reports that the filters left out.
        package var reportsFilteredOut: Int
    }

    /// Scans `paths` and reads every report found.
    public func read(_ paths: [String]) -> Result {
        let reduced = read(paths, reducing: StallProfile.init(report:path:))
        return Result(
            profiles: reduced.items, problems: reduced.problems, filesFound: reduced.filesFound,
            reportsRead: reduced.reportsRead, reportsFilteredOut: reduced.reportsFilteredOut)
    }

    /// Scans `paths`, reads every report found and keeps `reduce(report, path)` of each one that
    /// passes the filters (the decoded report itself is dropped at once).
    public func read<Item: Sendable>(
        _ paths: [String], reducing reduce: @escaping @Sendable (StallReport, String) -> Item
    ) -> Reduced<Item> {
        let scan = ReportScanner(reportEmptyDirectories: reportEmptyDirectories).scanCompact(paths)
        let files = scan.files
        // Zero-sized items: the queue only hands out indices into `files`.
        let queue = WorkQueue([Void](repeating: (), count: files.count))
        typealias Keyed = (startedAt: Date, path: String, item: Item)
        let locals = WorkerPool.run(workers: min(workers, max(1, files.count))) { _ in
            var local = (items: [Keyed](), problems: [ReportProblem](), reportsRead: 0, reportsFilteredOut: 0)
            var reader = FastRecordReader(loader: loader)
            defer { reader.release() }
            while let number = queue.nextIndex() {
                let path = files.path(at: number)
                // The fast path decides the filters; only the reports that pass are decoded in full.
                switch reader.report(path: path, skipping: { !accepts($0) }) {
                case .report(let report):
                    local.reportsRead += 1
                    local.items.append((report.startedAt, path, reduce(report, path)))
                case .skipped:
                    local.reportsRead += 1
                    local.reportsFilteredOut += 1
                case .failure(let error):
                    local.problems.append(ReportProblem(path: path, message: error.description))
                }
            }
            return local
        }
        var items: [Keyed] = []
        var result = Reduced<Item>(
            items: [], problems: scan.problems, filesFound: files.count, reportsRead: 0, reportsFilteredOut: 0)
        for local in locals {
            items += local.items
            result.problems += local.problems
            result.reportsRead += local.reportsRead
            result.reportsFilteredOut += local.reportsFilteredOut
        }
        result.items = items.sorted { ($0.startedAt, $0.path) < ($1.startedAt, $1.path) }.map(\.item)
        result.problems.sort { ($0.path, $0.message) < ($1.path, $1.message) }
        return result
    }
}
