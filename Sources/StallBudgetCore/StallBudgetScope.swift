import Foundation
import StallMonitor

/// One test's stall budget while the test runs: its report directory, the configuration of its
/// monitors, the monitors started with it and the reports they wrote. The test integrations
/// create it around the test body (``StallBudget/current`` is it meanwhile) and `finish()` it
/// after the body returns, on the test's own task.
///
/// A budget that names no watch may be given the test's own watch (the integration's choice of
/// what the test body runs on). It runs while the test does and counts only when the test started
/// no monitor with ``StallBudget/configuration()``: a test that puts its work on a loop of its own
/// is judged by that loop alone.
public final class StallBudgetScope: @unchecked Sendable {
    /// The budget this scope enforces.
    public let budget: StallBudget
    /// The configuration monitors started for this test use (``StallBudget/configuration()``).
    public private(set) var configuration: StallMonitor.Configuration
    /// Where this test's reports are written.
    public let reportDirectory: URL

    private let ownsDirectory: Bool
    private let startedAt = Date()
    /// Guards the state below (written from the writer queues of the monitors).
    private let lock = NSLock()
    /// The monitors of the budget's watches and those started with ``configuration``.
    private var monitors: [StallMonitor] = []
    /// The monitor of the test's own watch, and why it could not start.
    private var ownMonitor: StallMonitor?
    private var ownWatchProblem: String?
    private let ownWatch: StallBudget.Watch?
    private var reports: [(report: StallReport, url: URL, own: Bool)] = []
    private var finished = false

    /// Creates the report directory (a new temporary one unless the budget names one) and starts
    /// the budget's ``StallBudget/watches``. Throws when the directory cannot be created or a
    /// monitor cannot start (the monitors already started are stopped).
    public convenience init(_ budget: StallBudget) throws(StallBudgetError) {
        try self.init(budget, ownWatch: nil)
    }

    /// As ``init(_:)``; when the budget names no watch, also starts `ownWatch` (what the test's
    /// own code runs on). That it cannot start is no error: with nothing else watched, the
    /// outcome says so.
    package init(_ budget: StallBudget, ownWatch: StallBudget.Watch?) throws(StallBudgetError) {
        self.budget = budget
        self.ownWatch = budget.watches.isEmpty ? ownWatch : nil
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
            throw StallBudgetError(
                "the stall budget's report directory \(reportDirectory.path) could not be created: \(error)")
        }
        var configuration = StallMonitor.Configuration(
            threshold: budget.budget, reportDirectory: reportDirectory, maxReportsPerFingerprint: 10_000)
        configuration.logger = budget.monitorLogger
        self.configuration = configuration
        // The scope is complete here but for the callbacks, which need `self`.
        self.configuration.onReport = { [weak self] report, url in self?.collect(report, url, own: false) }
        self.configuration.onStart = { [weak self] monitor in self?.register(monitor) }
        for (index, watch) in budget.watches.enumerated() {
            do {
                register(try watch.start(self.configuration))
            } catch {
                _ = stopAll()
                removeDirectory()
                throw StallBudgetError(
                    "the stall budget's monitor \(index + 1) of \(budget.watches.count) could not start: \(error)")
            }
        }
        if let ownWatch = self.ownWatch {
            configuration.onReport = { [weak self] report, url in self?.collect(report, url, own: true) }
            do {
                let monitor = try ownWatch.start(configuration)
                lock.withLock { ownMonitor = monitor }
            } catch {
                lock.withLock { ownWatchProblem = "\(error)" }
            }
        }
    }

    /// ``init(_:ownWatch:)`` on a thread of its own, so that starting the watches (which may wait
    /// for the concurrency pool or the MainActor to run a probe) blocks no cooperative thread.
    package static func start(
        _ budget: StallBudget, ownWatch: StallBudget.Watch?
    ) async throws(StallBudgetError) -> StallBudgetScope {
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<StallBudgetScope, StallBudgetError>, Never>) in
            let thread = Thread {
                continuation.resume(
                    returning: Result { () throws(StallBudgetError) in try StallBudgetScope(budget, ownWatch: ownWatch)
                    })
            }
            thread.name = "StallBudget.start"
            thread.start()
        }
        return try result.get()
    }

    /// The monitors started with this scope's configuration so far (and the test's own watch's).
    public var watchingMonitors: [StallMonitor] {
        lock.withLock { monitors + (ownMonitor.map { [$0] } ?? []) }
    }

    private func register(_ monitor: StallMonitor) {
        let late = lock.withLock { () -> Bool in
            if finished { return true }
            if !monitors.contains(where: { $0 === monitor }) { monitors.append(monitor) }
            return false
        }
        // Started with a finished test's configuration (code that outlived its test): its stalls
        // would count against nobody.
        if late {
            monitor.configuration.logger.warning(
                "a monitor was started with the configuration of a test that has ended")
        }
    }

    private func collect(_ report: StallReport, _ url: URL, own: Bool) {
        lock.withLock {
            guard !finished else { return }
            reports.append((report, url, own))
        }
    }

    /// Ends the scope after the test body returned: waits for stalls that began before now to end
    /// (at most ``StallBudget/settleTimeout``), stops every monitor (writing their queued reports),
    /// and returns the stalls over budget, oldest first, and whether anything was watched. The
    /// report directory is deleted when it is the scope's own and nothing failed. Blocks the
    /// calling thread; from async code use the `async` variant.
    public func finish() -> StallBudgetOutcome {
        let bodyEnded = StallMonitor.monotonicNanoseconds()
        while stallsInProgress(begunBefore: bodyEnded) {
            Thread.sleep(forTimeInterval: 0.005)
        }
        let watched = whatWasWatched()
        for monitor in watchingMonitors { monitor.stop() }
        return conclude(watched)
    }

    /// The synchronous `finish()` for async code: waits suspended, and stops the monitors off the cooperative pool.
    public func finish() async -> StallBudgetOutcome {
        let bodyEnded = StallMonitor.monotonicNanoseconds()
        while stallsInProgress(begunBefore: bodyEnded) {
            try? await Task.sleep(for: .milliseconds(5))
        }
        let watched = whatWasWatched()
        for monitor in watchingMonitors { await monitor.stop() }
        return conclude(watched)
    }

    /// Whether a watched loop is in a span that began before `instant`, while the settle time lasts.
    private func stallsInProgress(begunBefore instant: UInt64) -> Bool {
        let now = StallMonitor.monotonicNanoseconds()
        let settle = budget.settleTimeout.components
        let limit = UInt64(max(0, settle.seconds)) * 1_000_000_000 + UInt64(max(0, settle.attoseconds) / 1_000_000_000)
        guard now < instant &+ limit else { return false }
        return watchingMonitors.contains { monitor in monitor.openSpanStarts.contains { $0 < instant } }
    }

    /// Which monitors count (the test's own watch only when nothing else was started), and nil
    /// when one of their loops ran; otherwise why nothing was watched.
    private func whatWasWatched() -> (ownCounts: Bool, nothingWatched: String?) {
        let (counted, own, problem) = lock.withLock { () -> ([StallMonitor], Bool, String?) in
            if !monitors.isEmpty { return (monitors, false, nil) }
            return (ownMonitor.map { [$0] } ?? [], true, ownWatchProblem)
        }
        if counted.isEmpty {
            return (own, NothingWatchedMessage.noMonitor(budget: budget.budget, watch: ownWatch?.name, reason: problem))
        }
        let loops = counted.flatMap(\.watchedLoops)
        if loops.contains(where: \.hasRun) { return (own, nil) }
        return (own, NothingWatchedMessage.notRunning(budget: budget.budget, watched: loops.map(\.kind)))
    }

    private func stopAll() -> [StallMonitor] {
        let all = watchingMonitors
        for monitor in all { monitor.stop() }
        return all
    }

    private func conclude(_ watched: (ownCounts: Bool, nothingWatched: String?)) -> StallBudgetOutcome {
        let collected = lock.withLock { () -> [(report: StallReport, url: URL, own: Bool)] in
            finished = true
            return reports
        }
        let threshold = budget.budget.milliseconds
        let violations =
            collected
            .filter { $0.own == watched.ownCounts && $0.report.durationMs > threshold }
            .sorted { $0.report.startedAt < $1.report.startedAt }
            .map {
                StallBudgetViolation(
                    report: $0.report, reportURL: $0.url, budget: budget.budget,
                    startedIntoTestMs: $0.report.startedAt.timeIntervalSince(startedAt) * 1e3)
            }
        if violations.isEmpty { removeDirectory() }
        return StallBudgetOutcome(violations: violations, nothingWatched: watched.nothingWatched)
    }

    /// Deletes the report directory when the scope made it.
    private func removeDirectory() {
        guard ownsDirectory else { return }
        try? FileManager.default.removeItem(at: reportDirectory)
    }
}
