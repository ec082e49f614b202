import Foundation
import StallMonitor
import StallReportKit
import Testing

/// A temporary report directory of its own for one test; `remove()` deletes it.
struct ReportDirectory {
    /// The directory (not created: the monitor creates it).
    let url: URL

    init(_ label: String = #function) {
        let safe = label.filter { $0.isLetter || $0.isNumber }
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("StallMonitorTests-\(safe)-\(UUID().uuidString)", isDirectory: true)
    }

    /// The parent that holds every path this test used.
    func remove() {
        try? FileManager.default.removeAll(at: url)
    }

    /// Every entry of the directory, hidden ones included, sorted by name.
    func entries() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted()
    }

    /// The report files (`*.json`, not hidden), sorted by name.
    func reportFiles() -> [URL] {
        entries()
            .filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }
            .map { url.appendingPathComponent($0) }
    }

    /// The decoded reports, in file-name order.
    func reports() throws -> [StallReport] {
        try reportFiles().map { url throws in try StallReport.read(from: url) }
    }

    /// The one decoded report; the test fails at the caller unless the directory holds exactly one.
    func onlyReport(sourceLocation: SourceLocation = #_sourceLocation) throws -> StallReport {
        let reports = try self.reports()
        try #require(reports.count == 1, sourceLocation: sourceLocation)
        return reports[0]
    }

    /// A configuration writing here, with the defaults the tests rely on (threshold 250 ms).
    func configuration(threshold: Duration = .milliseconds(250)) -> StallMonitor.Configuration {
        StallMonitor.Configuration(threshold: threshold, reportDirectory: url)
    }
}

/// A directory of the test's own that exists before anything runs (the monitor creates a
/// `ReportDirectory` itself), for tests that first put files, links or mounts in it. It is
/// removed when `body` returns or throws.
func withCreatedDirectory<T>(label: String = #function, _ body: (ReportDirectory) throws -> T) throws -> T {
    let root = ReportDirectory(label)
    defer { root.remove() }
    try FileManager.default.createDirectory(at: root.url, withIntermediateDirectories: true)
    return try body(root)
}

extension FileManager {
    fileprivate func removeAll(at url: URL) throws {
        if fileExists(atPath: url.path) { try removeItem(at: url) }
    }
}

extension StallReport {
    /// Symbols of the representative stack, leaf first (unnamed frames as "?").
    var representativeSymbols: [String] {
        representativeStack.map { frames[$0].symbol ?? "?" }
    }

    /// Symbols of one sample's frames, leaf first.
    func symbols(of sample: Sample) -> [String] {
        sample.frames.map { frames[$0].symbol ?? "?" }
    }

    /// Whether any sample (or the representative stack) names a symbol containing `text`.
    func anySampleNames(_ text: String) -> Bool {
        samples.contains { symbols(of: $0).contains { $0.contains(text) } }
    }
}

/// Waits until `condition` holds, checking every 5 ms, at most `timeout`. Returns whether it held.
@discardableResult
func waitUntil(timeout: Duration = .seconds(5), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        usleep(5_000)
    }
    return true
}

extension StallMonitor {
    /// Waits until `count` stalls were detected and their reports are written or failed (at most
    /// `timeout`), then flushes the writer. Returns whether that many stalls were seen.
    @discardableResult
    func waitForStalls(_ count: Int, timeout: Duration = .seconds(10)) -> Bool {
        let seen = waitUntil(timeout: timeout) {
            let statistics = self.statistics
            let failed = statistics.errors.values.reduce(0, +)
            return statistics.stallsDetected >= count && statistics.reportsWritten + failed >= count
        }
        flush(timeout: .seconds(5))
        return seen
    }
}
