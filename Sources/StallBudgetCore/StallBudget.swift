import Foundation
import Logging
import StallMonitor

/// How long a test's loops may stall, and which loops are watched: what the Swift Testing trait
/// (`.stallBudget(_:)`, `StallMonitorTesting`) and the XCTest helper (`assertNoStalls(budget:)`,
/// `StallMonitorXCTest`) carry.
///
/// Every stall that begins while the test runs and lasts longer than ``budget`` fails the test,
/// once per stall. Loops are watched by the monitors ``watches`` start before the test, and by
/// every monitor code in the test starts with ``configuration()`` (a `ResidentLoopThread`'s, an
/// event loop group's). When the test names no watch and starts no monitor, the test integration
/// watches the test's own thread or task (see ``Watch``). A budget that watched nothing (no loop
/// it watched ran while the test did) fails the test saying so: it never passes silently.
public struct StallBudget: Sendable {
    /// The longest awake span a watched loop may have: the monitors' threshold.
    public var budget: Duration
    /// Monitors started before the test body and stopped after it.
    public var watches: [Watch]
    /// Where reports are written; nil writes them to a new temporary directory per test, deleted
    /// afterwards unless a stall failed the test (its reports stay for the failure message's path).
    public var reportDirectory: URL?
    /// How long to wait, after the body returns, for a stall that began while it ran to end (it
    /// counts in full). A stall still going on then is reported as ending at that moment.
    public var settleTimeout: Duration
    /// Where the budget's monitors log (each report written, problems). nil, the default, logs
    /// nothing, so test output carries no monitor lines: a stall over budget fails the test with
    /// its own message either way. Pass a logger (e.g. `Logger(label: "StallMonitor")`) to see them.
    public var logger: Logger?

    /// A budget of `budget` for the loops `watches` watch and those watched with ``configuration()``.
    public init(
        _ budget: Duration, watching watches: [Watch] = [], reportDirectory: URL? = nil,
        settleTimeout: Duration = .seconds(10), logger: Logger? = nil
    ) {
        self.budget = budget
        self.watches = watches
        self.reportDirectory = reportDirectory
        self.settleTimeout = settleTimeout
        self.logger = logger
    }

    /// The logger the budget's monitors use: ``logger``, or one that drops everything.
    var monitorLogger: Logger {
        logger ?? Logger(label: "StallMonitor.budget", factory: { _ in SwiftLogNoOpLogHandler() })
    }

    /// A loop the budget watches from before the test body starts: a way to start a monitor with
    /// the budget's configuration.
    ///
    /// A budget that names no watch, in a test that starts no monitor with
    /// ``StallBudget/configuration()``, watches the test's own thread or task: under Swift Testing
    /// the concurrency pool and the MainActor (where test bodies run); in an `async` XCTest body
    /// the main run loop and the concurrency pool; in a synchronous XCTest body the calling
    /// thread's run loop (which runs only while the test waits, e.g. in `wait(for:timeout:)`).
    public struct Watch: Sendable {
        /// Starts the monitor (the configuration's threshold is the budget; keep its `onReport`).
        public let start: @Sendable (StallMonitor.Configuration) throws -> StallMonitor
        /// What it watches, for the message of a budget that watched nothing.
        package let name: String

        /// A watch called `name` that starts its monitor with `start`.
        package init(name: String, start: @escaping @Sendable (StallMonitor.Configuration) throws -> StallMonitor) {
            self.name = name
            self.start = start
        }

        /// A watch that starts its monitor with `start`, e.g.
        /// `.monitor { try StallMonitor.start($0, eventLoopGroup: MultiThreadedEventLoopGroup.singleton) }`.
        public static func monitor(
            _ start: @escaping @Sendable (StallMonitor.Configuration) throws -> StallMonitor
        ) -> Watch {
            Watch(name: "a monitor of the test's own", start: start)
        }

        /// The main thread's RunLoop (`StallMonitor.start(_:loop: .main)`). Under `swift test` on
        /// Linux it runs only while an XCTest test waits (`wait(for:timeout:)`, an `async` test);
        /// Swift Testing parks the main thread in `dispatchMain()`, so there starting fails with
        /// `loopNotRunning` and the test fails saying so.
        public static let mainRunLoop = Watch(name: "the main run loop") { try StallMonitor.start($0, loop: .main) }

        /// The Swift concurrency pool (`StallMonitor.start(_:loop: .concurrencyPool)`), where a
        /// test's own `async` and synchronous bodies, and every task they start, run under Swift
        /// Testing: a job that holds a pool worker past the budget fails the test. Every job on
        /// the pool counts, so run such tests serialized (`.serialized`) when others run beside
        /// them.
        public static let concurrencyPool = Watch(name: "the concurrency pool") {
            try StallMonitor.start($0, loop: .concurrencyPool)
        }

        /// The MainActor of a program whose main thread does not run `RunLoop.main`
        /// (`StallMonitor.start(_:loop: .mainActor)`): under Swift Testing, where `@MainActor`
        /// tests run.
        public static let mainActor = Watch(name: "the MainActor") { try StallMonitor.start($0, loop: .mainActor) }
    }
}

extension StallBudget {
    /// The budget of the test running now (the innermost one), if it has one.
    @TaskLocal public static var current: StallBudgetScope?

    /// A monitor configuration whose stalls count against the running test's budget: pass it to
    /// `StallMonitor.start`, `StallMonitor.start(_:eventLoopGroup:)` or `ResidentLoopThread(name:monitor:)`.
    /// Keep its `onReport`; other settings may be changed. Monitors started with it are flushed and
    /// stopped when the test ends. Throws ``StallBudgetError`` outside a test with a stall budget.
    public static func configuration() throws(StallBudgetError) -> StallMonitor.Configuration {
        guard let scope = current else {
            throw StallBudgetError(
                "StallBudget.configuration() was called outside a test with a stall budget "
                    + "(@Test(.stallBudget(…)) or assertNoStalls(budget:))")
        }
        return scope.configuration
    }
}
