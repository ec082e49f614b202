import Foundation
import NIOCore
import NIOPosix
import StallMonitorNIO
import StallMonitorTesting
import Testing

/// The trait's scope run directly (as Swift Testing runs it around a test), inside
/// `withKnownIssue`, so the issues it records after the body returns can be checked.
@Suite struct StallBudgetTraitTests {
    /// Runs `body` under `trait` for the current test; returns the messages of the issues recorded,
    /// each of which must be a stall-budget failure (anything else fails the test).
    private func stallIssues(
        _ trait: StallBudgetTrait, _ body: @escaping @Sendable () async throws -> Void
    ) async throws -> [String] {
        try await budgetIssues(trait, prefixes: ["Stall of "], body)
    }

    @Test func failsATestWhoseLoopStallsPastTheBudget() async throws {
        let messages = try await stallIssues(.stallBudget(.milliseconds(100))) {
            let worker = try ResidentLoopThread(name: "budget-loop", monitor: StallBudget.configuration())
            defer { worker.stop() }
            try worker.performAndWait { BudgetStalls.sleepPastTheBudgetForTest(milliseconds: 400) }
        }
        try #require(messages.count == 1, "\(messages)")
        let message = messages[0]
        #expect(
            message.contains("in static BudgetStalls.sleepPastTheBudgetForTest(milliseconds:) ("),
            "the simplified name: \(message)")
        #expect(message.contains("exceeded the 100 ms stall budget"), "\(message)")
        #expect(message.contains("runLoop thread 'budget-loop'"), "\(message)")
        #expect((stallMilliseconds(in: message) ?? 0) >= 300, "\(message)")
        // The report is kept for the failure and is the stall's.
        let path = try #require(reportPath(in: message))
        let report = try ReportCoding.makeDecoder().decode(
            StallReport.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(report.representativeFunction.contains("sleepPastTheBudgetForTest"))
        try FileManager.default.removeItem(at: URL(fileURLWithPath: path).deletingLastPathComponent())
    }

    @Test func passesAQuietTestAndLeavesNoReports() async throws {
        let directory = Collected()
        try await StallBudgetTrait.stallBudget(.milliseconds(100)).provideScope(
            for: Test.current!, testCase: Test.Case.current
        ) {
            directory.append(try #require(StallBudget.current).reportDirectory.path)
            let worker = try ResidentLoopThread(name: "quiet-loop", monitor: StallBudget.configuration())
            defer { worker.stop() }
            for value in 0..<20 { #expect(try worker.performAndWait { value * 2 } == value * 2) }
        }
        let path = try #require(directory.all.first)
        #expect(!FileManager.default.fileExists(atPath: path), "the quiet test's report directory was left behind")
    }

    @Test func recordsOneIssuePerStall() async throws {
        let messages = try await stallIssues(.stallBudget(.milliseconds(100))) {
            let worker = try ResidentLoopThread(name: "two-stalls", monitor: StallBudget.configuration())
            defer { worker.stop() }
            try worker.performAndWait { BudgetStalls.sleepPastTheBudgetForTest(milliseconds: 400) }
            try await Task.sleep(for: .milliseconds(50))  // the loop goes idle between the two
            try worker.performAndWait { BudgetStalls.sleepAgainPastTheBudgetForTest(milliseconds: 400) }
        }
        try #require(messages.count == 2, "\(messages)")
        #expect(messages[0].contains("sleepPastTheBudgetForTest"), "\(messages[0])")
        #expect(messages[1].contains("sleepAgainPastTheBudgetForTest"), "\(messages[1])")
        removeReports(of: messages)
    }

    @Test func countsAStallStillGoingOnWhenTheBodyReturns() async throws {
        let holder = Collected()
        let worker = LockedWorker()
        let messages = try await stallIssues(.stallBudget(.milliseconds(100))) {
            let thread = try ResidentLoopThread(name: "late-stall", monitor: StallBudget.configuration())
            worker.set(thread)
            let started = Started()
            thread.perform {
                started.signal()
                BudgetStalls.sleepPastTheBudgetForTest(milliseconds: 500)
            }
            #expect(started.wait())
            holder.append("returned")
            // Returns while the loop sleeps: the trait waits for the stall to end.
        }
        worker.stop()
        try #require(messages.count == 1, "\(messages)")
        #expect(messages[0].contains("sleepPastTheBudgetForTest"), "\(messages[0])")
        #expect((stallMilliseconds(in: messages[0]) ?? 0) >= 400, "the whole stall counts: \(messages[0])")
        removeReports(of: messages)
    }

    @Test func watchesTheConcurrencyPool() async throws {
        let trait = StallBudgetTrait.stallBudget(.milliseconds(100), watching: .concurrencyPool)
        let messages = try await stallIssues(trait) {
            await Task.detached { BudgetStalls.sleepPastTheBudgetForTest(milliseconds: 400) }.value
        }
        try expectOneStall(messages, in: "sleepPastTheBudgetForTest", onThreadOf: StallMonitor.concurrencyPoolKind)
    }

    @Test func watchesAnEventLoopGroupThroughAClosure() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let trait = StallBudgetTrait.stallBudget(.milliseconds(100)) {
            try StallMonitor.start($0, eventLoopGroup: group)
        }
        let messages = try await stallIssues(trait) {
            try await group.next().submit { BudgetStalls.sleepPastTheBudgetForTest(milliseconds: 400) }.get()
        }
        try await group.shutdownGracefully()
        try expectOneStall(messages, in: "sleepPastTheBudgetForTest", onThreadOf: StallMonitor.nioEventLoopKind)
    }

    /// Swift Testing on Linux parks the main thread in `dispatchMain()`: RunLoop.main never runs,
    /// and a budget that watches it fails the test before the body runs, saying why.
    @Test func failsClearlyWhenAWatchCannotStart() async throws {
        let bodyRan = Collected()
        let error = await #expect(throws: StallBudgetError.self) {
            try await StallBudgetTrait.stallBudget(.milliseconds(100), watching: .mainRunLoop)
                .provideScope(for: Test.current!, testCase: Test.Case.current) { bodyRan.append("ran") }
        }
        #expect(bodyRan.all.isEmpty)
        let text = try #require(error).description
        #expect(text.contains("could not start"), "\(text)")
        #expect(text.contains("RunLoop") || text.contains("run loop"), "\(text)")
    }

    @Test func configurationOutsideABudgetedTestThrows() {
        #expect(throws: StallBudgetError.self) { try StallBudget.configuration() }
    }
}

/// A thread handed out of a `@Sendable` body, stopped afterwards.
final class LockedWorker: @unchecked Sendable {
    private let lock = NSLock()
    private var thread: ResidentLoopThread?

    func set(_ thread: ResidentLoopThread) { lock.withLock { self.thread = thread } }

    func stop() { lock.withLock { thread }?.stop() }
}
