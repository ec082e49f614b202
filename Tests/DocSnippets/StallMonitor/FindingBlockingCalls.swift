// The snippets of Sources/StallMonitor/StallMonitor.docc/FindingBlockingCalls.md, compiled. Markers and wrapping:
// DocSnippetsTests.

// snippet: Sources/StallMonitor/StallMonitor.docc/FindingBlockingCalls.md
import StallMonitorTesting
import Testing
// snippet: pause

/// The article's tests, in a type of their own (other articles use the same names).
struct FindingBlockingCallsArticleTests {
    // snippet: resume
    @Test(.noBlockingCalls)
    func loadsTheProfileWithoutBlocking() async throws {
        let profile = try await ProfileStore().profile(id: 42)
        #expect(profile.name == "Ada")
    }

    // Logging to stderr may block on a full pipe: allowed by name.
    @Test(.noBlockingCalls(threshold: .milliseconds(5), allowing: ["writeLogLine"]))
    func rendersThePage() async throws {
        _ = try await PageRenderer().render()
    }
    // snippet: end
}

// snippet: Sources/StallMonitor/StallMonitor.docc/FindingBlockingCalls.md
import StallMonitorXCTest
import XCTest

final class ProfileTests: XCTestCase {
    func testLoadsTheProfileWithoutBlocking() async throws {
        let profile = try await assertNoBlockingCalls { try await ProfileStore().profile(id: 42) }
        XCTAssertEqual(profile.name, "Ada")
    }
}
// snippet: end

// snippet: Sources/StallMonitor/StallMonitor.docc/FindingBlockingCalls.md
import Foundation
import StallMonitor

func startMonitoring() throws -> StallMonitor {
    var configuration = StallMonitor.Configuration(reportDirectory: URL(filePath: "/var/lib/app/stall-reports"))
    configuration.blockingCalls = .init(threshold: .milliseconds(10), reportInterval: .seconds(60))
    return try StallMonitor.start(configuration, loops: [.concurrencyPool])
}
// snippet: end

// snippet: Sources/StallMonitor/StallMonitor.docc/FindingBlockingCalls.md
import Logging
import StallMonitor

func logBlockingCalls(_ logger: Logger) async throws {
    let detector = try BlockingCallDetector.start(.init(threshold: .milliseconds(10)))
    defer { detector.stop() }
    while !Task.isCancelled {
        try await Task.sleep(for: .seconds(10))
        for call in detector.takeCalls() {
            logger.warning("\(call)")
        }
    }
}
// snippet: end

// snippet: Sources/StallMonitor/StallMonitor.docc/FindingBlockingCalls.md
import StallMonitor

func readConfigurationAtStartup() throws -> [UInt8] {
    try BlockingCallDetector.allowBlocking {
        try readWholeFile("/etc/app/config.json")
    }
}
// snippet: end
