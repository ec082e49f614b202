import Foundation
import StallMonitor

/// One test's stall budget while the test runs: its report directory, the configuration of its
/// monitors, the monitors started with it and the reports they wrote. The test integrations
/// create it around the test body (``StallBudget/current`` is it meanwhile) and ``finish()`` it
/// after the body returns, on the test's own task.
public final class StallBudgetScope: @unchecked Sendable {
    /// The budget this scope enforces.
    public let budget: StallBudget
    /// The configuration monitors started for this test use (``StallBudget/configuration()``).
    public private(set) var configuration: StallMonitor.Configuration
    /// Where this test's reports are written.
    public let reportDirectory: URL

    private let ownsDirectory: Bool
    private let startedAt = Date()
    /// Guards `monitors`, `reports` and `finished` (written from the writer queues of the monitors).
    private let lock = NSLock()
    private var monitors: [StallMonitor] = []
    private var reports: [(report: StallReport, url: URL)] = []
    private var finished = false

    /// Creates the report directory (a new temporary one unless the budget names one) and starts
    /// the budget's ``StallBudget/watches``. Throws when the directory cannot be created or a
    /// monitor cannot start (the monitors already started are stopped).
    public init(_ budget: StallBudget) throws(StallBudgetError) {
        self.budget = budget
        if let directory = budget.reportDirectory {
            reportDirectory = directory
            ownsDirectory = false
        } else {
            reportDirectory = FileManager.default.temporaryDirectory
                .appendingPathComponent("stall-budget-\(UUID().uuidString.prefix(8).lowercased())", isDirectory: true)
            ownsDirectory = true
        }
        do {
            try FileManager.default.createDirectory(at: reportDirectory, withIntermediateDirectories: true)
        } catch {
            throw StallBudgetError("the stall budget's report directory \(reportDirectory.path) could not be created: \(error)")
        }
        let configuration = StallMonitor.Configuration(
            threshold: budget.budget, reportDirectory: reportDirectory, maxReportsPerFingerprint: 10_000)
        self.configuration = configuration
        // The scope is complete here but for the callbacks, which need `self`.
        self.configuration.onReport = { [weak self] report, url in self?.collect(report, url) }
        self.configuration.onStart = { [weak self] monitor in self?.register(monitor) }
        for (index, watch) in budget.watches.enumerated() {
            do {
                register(try watch.start(self.configuration))
            } catch {
                _ = stopAll()
                removeDirectory()
                throw StallBudgetError("the stall budget's monitor \(index + 1) of \(budget.watches.count) could not start: \(error)")
            }
        }
    }

    /// The monitors started with this scope's configuration so far.
    public var watchingMonitors: [StallMonitor] {
        lock.withLock { monitors }
    }

    private func register(_ monitor: StallMonitor) {
        let late = lock.withLock { () -> Bool in
            if finished { return true }
            if !monitors.contains(where: { $0 === monitor }) { monitors.append(monitor) }
            return false
        }
        // Started with a finished test's configuration (code that outlived its test): its stalls
        // would count against nobody.
        if late { monitor.configuration.logger.warning("a monitor was started with the configuration of a test that has ended") }
    }

    private func collect(_ report: StallReport, _ url: URL) {
        lock.withLock {
            guard !finished else { return }
            reports.append((report, url))
        }
    }

    /// Ends the scope after the test body returned: waits for stalls that began before now to end
    /// (at most ``StallBudget/settleTimeout``), stops every monitor (writing their queued reports),
    /// and returns the stalls over budget, oldest first. The report directory is deleted when it
    /// is the scope's own and nothing failed. Blocks the calling thread; from async code use the
    /// `async` variant.
    public func finish() -> [StallBudgetViolation] {
        let bodyEnded = StallMonitor.monotonicNanoseconds()
        while stallsInProgress(begunBefore: bodyEnded) {
            Thread.sleep(forTimeInterval: 0.005)
        }
        for monitor in watchingMonitors { monitor.stop() }
        return conclude()
    }

    /// ``finish()`` for async code: waits suspended, and stops the monitors off the cooperative pool.
    public func finish() async -> [StallBudgetViolation] {
        let bodyEnded = StallMonitor.monotonicNanoseconds()
        while stallsInProgress(begunBefore: bodyEnded) {
            try? await Task.sleep(for: .milliseconds(5))
        }
        for monitor in watchingMonitors { await monitor.stop() }
        return conclude()
    }

    /// Whether a watched loop is in a span that began before `instant`, while the settle time lasts.
    private func stallsInProgress(begunBefore instant: UInt64) -> Bool {
        let now = StallMonitor.monotonicNanoseconds()
        let settle = budget.settleTimeout.components
        let limit = UInt64(max(0, settle.seconds)) * 1_000_000_000 + UInt64(max(0, settle.attoseconds) / 1_000_000_000)
        guard now < instant &+ limit else { return false }
        return watchingMonitors.contains { monitor in monitor.openSpanStarts.contains { $0 < instant } }
    }

    private func stopAll() -> [StallMonitor] {
        let all = watchingMonitors
        for monitor in all { monitor.stop() }
        return all
    }

    private func conclude() -> [StallBudgetViolation] {
        let collected = lock.withLock { () -> [(report: StallReport, url: URL)] in
            finished = true
            return reports
        }
        let threshold = Double(budget.budget.components.seconds) * 1e3 + Double(budget.budget.components.attoseconds) / 1e15
        let violations = collected
            .filter { $0.report.durationMs > threshold }
            .sorted { $0.report.startedAt < $1.report.startedAt }
            .map { StallBudgetViolation(report: $0.report, reportURL: $0.url, budget: budget.budget,
                                        startedIntoTestMs: $0.report.startedAt.timeIntervalSince(startedAt) * 1e3) }
        if violations.isEmpty { removeDirectory() }
        return violations
    }

    /// Deletes the report directory when the scope made it.
    private func removeDirectory() {
        guard ownsDirectory else { return }
        try? FileManager.default.removeItem(at: reportDirectory)
    }
}
