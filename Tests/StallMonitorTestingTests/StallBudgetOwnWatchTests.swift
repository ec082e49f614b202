import Foundation
import Glibc
import Logging
import StallMonitorTesting
import Testing

/// A budget that names no watch watches where Swift Testing runs the test body, and one that
/// watched nothing fails saying so. Serialized: the concurrency pool is shared by every test.
@Suite(.serialized) struct StallBudgetOwnWatchTests {
    @Test("a body that blocks its own task on the concurrency pool fails the budget that names no watch")
    func failsABodyThatBlocksItsOwnTask() async throws {
        let messages = try await budgetIssues(.stallBudget(.milliseconds(250))) {
            BudgetStalls.sleepPastTheBudgetForTest(milliseconds: 400)
        }
        defer { removeReports(of: messages) }
        let own = messages.filter { $0.contains("sleepPastTheBudgetForTest") }
        try #require(own.count == 1, "\(messages)")
        #expect(own[0].contains("exceeded the 250 ms stall budget"), "\(own[0])")
        #expect(own[0].contains("(\(StallMonitor.concurrencyPoolKind) thread"), "\(own[0])")
        #expect((stallMilliseconds(in: own[0]) ?? 0) >= 300, "\(own[0])")
        #expect(!messages.contains { $0.hasPrefix("Nothing was watched") }, "\(messages)")
    }

    @Test("a @MainActor body that blocks the MainActor fails the budget that names no watch")
    func failsAMainActorBodyThatBlocks() async throws {
        let messages = try await budgetIssues(.stallBudget(.milliseconds(250))) { @MainActor in
            BudgetStalls.sleepPastTheBudgetForTest(milliseconds: 400)
        }
        defer { removeReports(of: messages) }
        let own = messages.filter { $0.contains("sleepPastTheBudgetForTest") }
        try #require(own.count == 1, "\(messages)")
        #expect(own[0].contains("(\(StallMonitor.mainActorKind) thread"), "\(own[0])")
    }

    /// Run outside `withKnownIssue`: any issue the budget records fails this test.
    @Test("a quiet body under a budget that names no watch records nothing")
    func passesAQuietBody() async throws {
        try await StallBudgetTrait.stallBudget(.milliseconds(250)).provideScope(
            for: Test.current!, testCase: Test.Case.current
        ) {
            let scope = try #require(StallBudget.current)
            #expect(scope.watchingMonitors.count == 1, "the test's own watch runs")
            for _ in 0..<10 { await Task.yield() }
        }
    }

    /// The budget names a loop that never runs (a thread that blocks instead of running its run
    /// loop), and the body blocks the unwatched pool: the stall must not pass silently.
    @Test("a budget whose watched loop never ran fails with 'Nothing was watched' and how to watch")
    func failsABudgetThatWatchedNothing() async throws {
        let parked = ParkedThread()
        defer { parked.release() }
        let trait = StallBudgetTrait.stallBudget(.milliseconds(250)) { configuration in
            try parked.startMonitor(configuration)
        }
        let messages = try await budgetIssues(trait) {
            BudgetStalls.sleepPastTheBudgetForTest(milliseconds: 400)
        }
        try #require(messages.count == 1, "\(messages)")
        let message = messages[0]
        #expect(
            message.hasPrefix(
                "Nothing was watched: none of the loops the 250 ms stall budget watched ran while the test did (runLoop)"
            ),
            "\(message)")
        #expect(message.contains("watching: .concurrencyPool"), "it says how to watch: \(message)")
        #expect(message.contains("StallBudget.configuration()"), "\(message)")
    }

    @Test("a budget whose own watch cannot start, in a test that starts no monitor, says why nothing was watched")
    func failsABudgetWhoseOwnWatchCannotStart() async throws {
        let cannot = StallBudget.Watch(name: "the test's task") { _ in throw StallBudgetError("no pool here") }
        let scope = try StallBudgetScope(StallBudget(.milliseconds(250)), ownWatch: cannot)
        BudgetStalls.sleepPastTheBudgetForTest(milliseconds: 10)
        let outcome = await scope.finish()
        #expect(outcome.violations.isEmpty)
        let message = try #require(outcome.nothingWatched)
        #expect(
            message.hasPrefix(
                "Nothing was watched: the 250 ms stall budget could not watch the test's task (no pool here)"),
            "\(message)")
        #expect(outcome.failureMessages == [message])
    }

    @Test("the budget's monitors log nothing by default, and through the logger it is given")
    func logsOnlyWhenAsked() async throws {
        try await StallBudgetTrait.stallBudget(.milliseconds(250)).provideScope(
            for: Test.current!, testCase: Test.Case.current
        ) {
            let configuration = try StallBudget.configuration()
            #expect(configuration.logger.handler is SwiftLogNoOpLogHandler)
        }
        let lines = Collected()
        let logger = Logger(label: "budget-test") { _ in CollectingLogHandler(lines) }
        let messages = try await budgetIssues(.stallBudget(.milliseconds(250), logger: logger)) {
            let worker = try ResidentLoopThread(name: "logged-loop", monitor: StallBudget.configuration())
            defer { worker.stop() }
            try worker.performAndWait { BudgetStalls.sleepPastTheBudgetForTest(milliseconds: 400) }
        }
        defer { removeReports(of: messages) }
        #expect(messages.count == 1, "\(messages)")
        #expect(lines.all.contains { $0.contains("ms stall") && $0.contains("logged-loop") }, "\(lines.all)")
    }
}

/// A thread that starts a run-loop monitor for itself, then blocks (never running its run loop)
/// until released.
final class ParkedThread: @unchecked Sendable {
    private let release_ = DispatchSemaphore(value: 0)

    /// Starts a monitor of this thread's run loop on it and returns it; the thread then blocks.
    func startMonitor(_ configuration: StallMonitor.Configuration) throws -> StallMonitor {
        let started = Locked<Result<StallMonitor, any Error>?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let thread = Thread { [release_] in
            started.withLock { $0 = Result { try StallMonitor.start(configuration, loop: .current) } }
            ready.signal()
            release_.wait()
        }
        thread.name = "parked-loop"
        thread.start()
        ready.wait()
        return try started.withLock { $0! }.get()
    }

    /// Lets the thread end.
    func release() { release_.signal() }
}

/// Keeps each message logged.
struct CollectingLogHandler: LogHandler {
    let lines: Collected
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    init(_ lines: Collected) { self.lines = lines }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lines.append("\(event.message)")
    }
}
