import Foundation
import StallBudgetCore
import StallMonitor
import XCTest

extension XCTestCase {
    /// Runs `body` and fails the test once for every stall longer than `budget` in the loops
    /// watched: those `watches` start before `body` (e.g. `.mainRunLoop`, which runs while the test
    /// waits for expectations), and those `body` starts with ``StallBudget/configuration()``.
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
    /// cannot start (`body` does not run), and what `body` throws.
    public func assertNoStalls<Result>(budget: Duration, watching watches: StallBudget.Watch..., reportDirectory: URL? = nil,
                                       settleTimeout: Duration = .seconds(10), file: StaticString = #filePath, line: UInt = #line,
                                       _ body: () throws -> Result) throws -> Result {
        let scope = try StallBudgetScope(StallBudget(budget, watching: watches, reportDirectory: reportDirectory,
                                                     settleTimeout: settleTimeout))
        let outcome = Swift.Result { try StallBudget.$current.withValue(scope) { try body() } }
        record(scope.finish(), file: file, line: line)
        return try outcome.get()
    }

    /// ``assertNoStalls(budget:watching:reportDirectory:settleTimeout:file:line:_:)`` for an async body.
    public func assertNoStalls<Result: Sendable>(budget: Duration, watching watches: StallBudget.Watch..., reportDirectory: URL? = nil,
                                                 settleTimeout: Duration = .seconds(10), file: StaticString = #filePath,
                                                 line: UInt = #line, _ body: () async throws -> Result) async throws -> Result {
        let scope = try StallBudgetScope(StallBudget(budget, watching: watches, reportDirectory: reportDirectory,
                                                     settleTimeout: settleTimeout))
        let outcome: Swift.Result<Result, any Error>
        do {
            outcome = .success(try await StallBudget.$current.withValue(scope) { try await body() })
        } catch {
            outcome = .failure(error)
        }
        record(await scope.finish(), file: file, line: line)
        return try outcome.get()
    }

    private func record(_ violations: [StallBudgetViolation], file: StaticString, line: UInt) {
        for violation in violations {
            recordFailure(withDescription: violation.message, inFile: String(describing: file), atLine: Int(line), expected: true)
        }
    }
}
