import Foundation
import Logging
import StallBudgetCore
import StallMonitor
import XCTest

extension XCTestCase {
    /// Runs `body` and fails the test once for every stall longer than `budget` in the loops
    /// watched: those `watches` start before `body` (e.g. `.mainRunLoop`, which runs while the test
    /// waits for expectations), and those `body` starts with `StallBudget.configuration()`. With
    /// neither, the calling thread's run loop (XCTest's main one, which runs while the test waits).
    /// A budget that watched nothing (no watched loop ran: e.g. a body that blocks its own thread
    /// and never waits) fails the test with a message starting `Nothing was watched:` that says
    /// how to watch it.
    ///
    /// ```swift
    /// func testDecodesOffTheLoop() throws {
    ///     try assertNoStalls(budget: .milliseconds(100)) {
    ///         let worker = try ResidentLoopThread(name: "decoder", monitor: StallBudget.configuration())
    ///         defer { worker.stop() }
    ///         try worker.performAndWait { decodeSmallDocument() }
    ///     }
    /// }
    /// ```
    ///
    /// After `body` returns (or throws) it waits for stalls that began meanwhile to end (at most
    /// `settleTimeout`), stops the monitors and records each stall over the budget with
    /// `recordFailure` at `file`/`line`: its duration, the budget, its top app frame and the path
    /// of its report (kept on disk; swift-corelibs-xctest has no attachments). Throws when a watch
    /// cannot start (`body` does not run), and what `body` throws. The monitors log through
    /// `logger`; nil (the default) logs nothing.
    public func assertNoStalls<Result>(
        budget: Duration, watching watches: StallBudget.Watch..., reportDirectory: URL? = nil,
        settleTimeout: Duration = .seconds(10), logger: Logger? = nil, file: StaticString = #filePath,
        line: UInt = #line, _ body: () throws -> Result
    ) throws -> Result {
        let scope = try StallBudgetScope(
            StallBudget(
                budget, watching: watches, reportDirectory: reportDirectory,
                settleTimeout: settleTimeout, logger: logger),
            ownWatch: .callingThreadRunLoop)
        let outcome = Swift.Result { try StallBudget.$current.withValue(scope) { try body() } }
        record(scope.finish(), file: file, line: line)
        return try outcome.get()
    }

    /// ``assertNoStalls(budget:watching:reportDirectory:settleTimeout:logger:file:line:_:)`` for an
    /// async body. With no watch named and no monitor started by `body`, it watches the main run
    /// loop (which drains the MainActor while XCTest waits for the test) and the concurrency pool,
    /// where `body` runs.
    public func assertNoStalls<Result: Sendable>(
        budget: Duration, watching watches: StallBudget.Watch..., reportDirectory: URL? = nil,
        settleTimeout: Duration = .seconds(10), logger: Logger? = nil,
        file: StaticString = #filePath, line: UInt = #line,
        _ body: () async throws -> Result
    ) async throws -> Result {
        let scope = try await StallBudgetScope.start(
            StallBudget(
                budget, watching: watches, reportDirectory: reportDirectory,
                settleTimeout: settleTimeout, logger: logger),
            ownWatch: .asyncXCTestTask)
        let outcome: Swift.Result<Result, any Error>
        do {
            outcome = .success(try await StallBudget.$current.withValue(scope) { try await body() })
        } catch {
            outcome = .failure(error)
        }
        record(await scope.finish(), file: file, line: line)
        return try outcome.get()
    }

    private func record(_ outcome: StallBudgetOutcome, file: StaticString, line: UInt) {
        for message in outcome.failureMessages {
            recordFailure(withDescription: message, inFile: String(describing: file), atLine: Int(line), expected: true)
        }
    }
}
