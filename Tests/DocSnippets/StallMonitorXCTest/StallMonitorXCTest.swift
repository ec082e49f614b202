// The snippets of Sources/StallMonitorXCTest/StallMonitorXCTest.docc/StallMonitorXCTest.md, compiled. Markers and wrapping:
// DocSnippetsTests. Its Package.swift excerpt is a fragment.

// snippet: Sources/StallMonitorXCTest/StallMonitorXCTest.docc/StallMonitorXCTest.md
import StallMonitorXCTest
import XCTest

final class DecoderTests: XCTestCase {
    // async: with no watch named, the budget watches the main run loop and the concurrency
    // pool, where the body runs.
    func testParsesQuickly() async throws {
        try await assertNoStalls(budget: .milliseconds(250)) {
            try parseLargeDocument()
        }
    }

    // Work on a loop of its own: judged by that loop alone.
    func testDecodesWithoutStalling() throws {
        try assertNoStalls(budget: .milliseconds(100)) {
            let worker = try ResidentLoopThread(name: "decoder", monitor: StallBudget.configuration())
            defer { worker.stop() }
            try worker.performAndWait { decodeLargeDocument() }
        }
    }
}
// snippet: end
