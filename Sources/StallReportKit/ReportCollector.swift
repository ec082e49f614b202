import Foundation
import Synchronization

/// Reads every report under a set of paths in parallel and folds them into a ``ReportCollection``.
///
/// Files are found first (``ReportScanner``), then a fixed pool of workers (one per core by
/// default) takes files from a shared counter, decodes each with ``ReportLoader`` and folds it
/// into the worker's own per-fingerprint accumulators at once; the decoded report is dropped right
/// away. Memory therefore grows with the number of fingerprints and durations, not with the size
/// or number of reports. The workers' results are merged at the end.
public struct ReportCollector: Sendable {
    /// How each file is read.
    public var loader: ReportLoader
    /// Which stalls take part.
    public var filter: RecordFilter
    /// Number of worker threads.
    public var workers: Int
    /// Whether a directory with no `*.json` file is a problem.
    public var reportEmptyDirectories: Bool

    /// Creates a collector; `workers` defaults to the number of active cores.
    public init(loader: ReportLoader = ReportLoader(), filter: RecordFilter = RecordFilter(), workers: Int? = nil, reportEmptyDirectories: Bool = true) {
        self.loader = loader
        self.filter = filter
        self.workers = max(1, workers ?? ProcessInfo.processInfo.activeProcessorCount)
        self.reportEmptyDirectories = reportEmptyDirectories
    }

    /// Scans `paths` and reads every report found.
    public func collect(_ paths: [String]) -> ReportCollection {
        let scan = ReportScanner(reportEmptyDirectories: reportEmptyDirectories).scan(paths)
        var result = read(files: scan.files)
        result.problems = (scan.problems + result.problems).sorted { ($0.path, $0.message) < ($1.path, $1.message) }
        return result
    }

    /// Reads the given files (already found) in parallel.
    public func read(files: [String]) -> ReportCollection {
        let shared = Shared(files: files)
        let loader = self.loader
        let filter = self.filter
        let threadCount = min(workers, max(1, files.count))
        DispatchQueue.concurrentPerform(iterations: threadCount) { _ in
            var local = ReportCollection()
            while let path = shared.next() {
                switch loader.load(path: path) {
                case .success(let report):
                    local.add(StallRecord(report: report, path: path), filter: filter)
                case .failure(let error):
                    local.problems.append(ReportProblem(path: path, message: error.description))
                }
            }
            shared.finish(local)
        }
        var result = shared.result()
        result.filesFound = files.count
        result.problems.sort { ($0.path, $0.message) < ($1.path, $1.message) }
        return result
    }

    /// The work queue and the merged result, shared by the workers.
    private final class Shared: Sendable {
        let files: [String]
        let nextIndex = Atomic<Int>(0)
        let merged = Mutex(ReportCollection())

        init(files: [String]) {
            self.files = files
        }

        func next() -> String? {
            let index = nextIndex.wrappingAdd(1, ordering: .relaxed).oldValue
            return index < files.count ? files[index] : nil
        }

        func finish(_ local: ReportCollection) {
            merged.withLock { $0.merge(local) }
        }

        func result() -> ReportCollection {
            merged.withLock { $0 }
        }
    }
}
