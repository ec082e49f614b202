import Foundation
import Logging
import StallBudgetCore
import StallMonitor
import Testing

/// A Swift Testing trait that fails a test once for every stall of a watched loop longer than the
/// budget: `@Test(.stallBudget(.milliseconds(100)))`. On a suite it applies to each of its tests.
///
/// Around each test (each case of a parameterized one) it creates a `StallBudgetScope`: it starts
/// the trait's watches, runs the test with `StallBudget.current` set (so monitors the test starts
/// with `StallBudget.configuration()` count too), waits for stalls still in progress when the body
/// returns, stops the monitors, then records on the test's own task one issue per stall over the
/// budget (naming the stall's top app frame, its duration, the budget and the report's path) with
/// the report's JSON attached. A watch that cannot start fails the test before its body runs.
///
/// A trait that names no watch, on a test that starts no monitor with `StallBudget.configuration()`,
/// watches where Swift Testing runs the test body: the concurrency pool (and the MainActor, for a
/// `@MainActor` test). The pool is shared: a stall of a test running beside it counts as well, so
/// run budgeted tests serialized (`.serialized`, `swift test --no-parallel`). A budget that watched
/// nothing (no watched loop ran while the test did) records an issue saying so, starting
/// `Nothing was watched:`, and how to watch the test's code.
public struct StallBudgetTrait: TestTrait, SuiteTrait, TestScoping {
    /// The budget and what it watches.
    public var budget: StallBudget

    /// Applied to a suite, the budget applies to each test in it.
    public var isRecursive: Bool { true }

    /// A trait enforcing `budget`.
    public init(_ budget: StallBudget) {
        self.budget = budget
    }

    /// Runs `function` under a new `StallBudgetScope` and records its violations.
    public func provideScope(
        for test: Test, testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        let scope = try await StallBudgetScope.start(budget, ownWatch: .swiftTestingTask)
        var thrown: (any Error)?
        do {
            try await StallBudget.$current.withValue(scope) { try await function() }
        } catch {
            thrown = error
        }
        let outcome = await scope.finish()
        for violation in outcome.violations {
            Issue.record(Comment(rawValue: violation.message), sourceLocation: test.sourceLocation)
            if let bytes = try? Data(contentsOf: violation.reportURL) {
                Attachment.record(
                    Array(bytes), named: violation.reportURL.lastPathComponent, sourceLocation: test.sourceLocation)
            }
        }
        if let nothingWatched = outcome.nothingWatched {
            Issue.record(Comment(rawValue: nothingWatched), sourceLocation: test.sourceLocation)
        }
        if let thrown { throw thrown }
    }

    /// For a test inside a suite that has its own budget, only the test's (the innermost) applies.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        // Each test case gets a scope of its own; a suite needs none.
        guard testCase != nil else { return nil }
        guard let innermost = test.traits.last(where: { $0 is StallBudgetTrait }) as? StallBudgetTrait else {
            return self
        }
        return innermost.identity == identity ? self : nil
    }

    private let identity = UUID()
}

extension Trait where Self == StallBudgetTrait {
    /// Fails the test once for every stall longer than `budget` in the loops watched: those the
    /// `watching` watches start before the test (e.g. `.concurrencyPool`, `.mainActor`, or
    /// `.monitor { try StallMonitor.start($0, eventLoopGroup: group) }`), and those the test starts
    /// with `StallBudget.configuration()`. With neither, the concurrency pool and the MainActor,
    /// where the test body runs. Fails it too when nothing was watched.
    ///
    /// ```swift
    /// @Test(.stallBudget(.milliseconds(100)))
    /// func decodesOffTheLoop() throws {
    ///     let worker = try ResidentLoopThread(name: "decoder", monitor: StallBudget.configuration())
    ///     defer { worker.stop() }
    ///     try worker.performAndWait { decodeSmallDocument() }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - budget: the longest a watched loop may stay busy without failing the test.
    ///   - watches: monitors to start before the test body (and stop after it).
    ///   - reportDirectory: where reports go; nil: a temporary directory per test, deleted unless
    ///     a stall failed the test.
    ///   - logger: where the monitors log; nil (the default) logs nothing.
    public static func stallBudget(
        _ budget: Duration, watching watches: StallBudget.Watch...,
        reportDirectory: URL? = nil, logger: Logger? = nil
    ) -> Self {
        StallBudgetTrait(StallBudget(budget, watching: watches, reportDirectory: reportDirectory, logger: logger))
    }

    /// The budget `budget`, for the loop whose monitor `start` starts with the configuration it is
    /// given: `.stallBudget(.milliseconds(100)) { try StallMonitor.start($0, eventLoopGroup: group) }`.
    public static func stallBudget(
        _ budget: Duration, reportDirectory: URL? = nil, logger: Logger? = nil,
        watching start: @escaping @Sendable (StallMonitor.Configuration) throws -> StallMonitor
    ) -> Self {
        StallBudgetTrait(
            StallBudget(budget, watching: [.monitor(start)], reportDirectory: reportDirectory, logger: logger))
    }
}
