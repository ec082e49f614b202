// The snippets of Sources/StallMonitorTesting/StallMonitorTesting.docc/StallBudgets.md, compiled. Markers and wrapping: DocSnippetsTests.

// snippet: Sources/StallMonitorTesting/StallMonitorTesting.docc/StallBudgets.md
import StallMonitorTesting
import Testing
// snippet: pause

/// The article's tests, in a type of their own (other articles use the same names).
struct StallBudgetsArticleTests {
    // snippet: resume
    // Fails when parsing blocks the test's task on the concurrency pool for more than 250 ms.
    @Test(.stallBudget(.milliseconds(250)))
    func parsesQuickly() throws {
        try parseLargeDocument()
    }

    // Judged by the decoder's loop alone.
    @Test(.stallBudget(.milliseconds(100)))
    func decodesOffTheLoop() throws {
        let worker = try ResidentLoopThread(name: "decoder", monitor: StallBudget.configuration())
        defer { worker.stop() }
        try worker.performAndWait { decodeSmallDocument() }
    }
    // snippet: end
}

// snippet: Sources/StallMonitorTesting/StallMonitorTesting.docc/StallBudgets.md
import Logging
// snippet: pause

extension StallBudgetsArticleTests {
    // snippet: resume
    @Test(.stallBudget(.milliseconds(250), logger: Logger(label: "StallMonitor")))
    func parsesQuicklyWithLogs() throws {
        try parseLargeDocument()
    }
    // snippet: end
}
