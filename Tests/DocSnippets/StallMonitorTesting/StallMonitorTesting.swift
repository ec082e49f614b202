// The snippets of Sources/StallMonitorTesting/StallMonitorTesting.docc/StallMonitorTesting.md, compiled. Markers and wrapping:
// DocSnippetsTests. Its Package.swift excerpt is a fragment.

// snippet: Sources/StallMonitorTesting/StallMonitorTesting.docc/StallMonitorTesting.md
import NIOPosix
import StallMonitorNIO
import StallMonitorTesting
import Testing
// snippet: pause

/// The article's tests, in a type of their own (other articles use the same names).
struct StallMonitorTestingArticleTests {
    // snippet: resume
    // No watch named: the budget watches the concurrency pool and the MainActor, where the body runs.
    @Test(.stallBudget(.milliseconds(250)))
    func parsesQuickly() throws {
        try parseLargeDocument()
    }

    // Work on a loop of its own: judged by that loop alone.
    @Test(.stallBudget(.milliseconds(100)))
    func decodesWithoutStalling() throws {
        let worker = try ResidentLoopThread(name: "decoder", monitor: StallBudget.configuration())
        defer { worker.stop() }
        try worker.performAndWait { decodeLargeDocument() }
    }

    // A loop that exists before the test: a closure (or `watching: .monitor { … }`) starts its monitor.
    @Test(.stallBudget(.milliseconds(100)) { try StallMonitor.start($0, eventLoopGroup: MultiThreadedEventLoopGroup.singleton) })
    func servesWithoutStalling() async throws {
        try await serveOneRequest()
    }
    // snippet: end
}
