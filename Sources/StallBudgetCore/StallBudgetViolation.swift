import Foundation
import StallMonitor

/// One stall that exceeded a test's budget: the failure a test integration records.
public struct StallBudgetViolation: Sendable {
    /// The stall's final report.
    public let report: StallReport
    /// The report's file.
    public let reportURL: URL
    /// The budget it exceeded.
    public let budget: Duration
    /// How long after the test body began the stall began, in milliseconds.
    public let startedIntoTestMs: Double

    /// One line for the test failure: duration, budget, the top app frame (and, for a stall in
    /// async code, the nearest app function that awaited it), the loop, the report.
    ///
    /// `Stall of 402 ms exceeded the 100 ms stall budget in static MyTests.decode() (runLoop
    /// thread 'worker', began 12 ms into the test); report: /tmp/stall-budget-…/stall-….json`
    public var message: String {
        "Stall of \(Self.milliseconds(report.durationMs)) exceeded the "
            + "\(Self.milliseconds(Double(budget.components.seconds) * 1e3 + Double(budget.components.attoseconds) / 1e15)) "
            + "stall budget in \(SimplifiedSwiftName.simplify(report.representativeFunction))"
            + (report.nearestAppAsyncCaller.map {
                ", awaited by \(SimplifiedSwiftName.simplify(AsyncCallerNames.function(of: $0)))"
            } ?? "")
            + " (\(report.loop.kind) thread '\(report.loop.threadName)', "
            + "began \(Self.milliseconds(max(0, startedIntoTestMs))) into the test); report: \(reportURL.path)"
    }

    /// `402 ms`, `0.5 ms`.
    static func milliseconds(_ value: Double) -> String {
        value >= 10 || value == value.rounded() ? "\(Int(value.rounded())) ms" : "\((value * 10).rounded() / 10) ms"
    }
}
