import Foundation
import Glibc
import StallMonitorXCTest
import XCTest

/// Blocks in `usleep`: the call the failure must name.
@inline(never)
func blockInUsleepForXCTest() {
    usleep(15_000)
}

/// `assertNoBlockingCalls` in real XCTest tests. Failures are captured (`recordFailure`
/// overridden) so the expected one can be checked; any other failure goes through.
final class AssertNoBlockingCallsTests: XCTestCase {
    private var captured: [String] = []
    private var capturing = false

    override func recordFailure(
        withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool
    ) {
        if capturing && description.hasPrefix("Blocking call: ") {
            captured.append(description)
        } else {
            super.recordFailure(withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
        }
    }

    private func usleepIsSeen() throws -> Bool {
        guard let detector = try? BlockingCallDetector.startScoped() else { return false }
        defer { detector.stop() }
        return !detector.callsUnseenInExecutable.contains("usleep")
    }

    func testFailsASynchronousTestThatBlocks() throws {
        try XCTSkipUnless(
            usleepIsSeen(), "the test executable's usleep calls bind inside it (a sanitizer's interceptor)")
        capturing = true
        try assertNoBlockingCalls { blockInUsleepForXCTest() }
        capturing = false
        XCTAssertEqual(captured.count, 1, "\(captured)")
        XCTAssertTrue(captured.first?.hasPrefix("Blocking call: usleep blocked ") == true, "\(captured)")
        XCTAssertTrue(captured.first?.contains("blockInUsleepForXCTest") == true, "\(captured)")
    }

    func testFailsAnAsyncTestThatBlocks() async throws {
        try XCTSkipUnless(
            usleepIsSeen(), "the test executable's usleep calls bind inside it (a sanitizer's interceptor)")
        capturing = true
        try await assertNoBlockingCalls { () async in blockInUsleepForXCTest() }
        capturing = false
        XCTAssertEqual(captured.count, 1, "\(captured)")
        XCTAssertTrue(captured.first?.contains("blockInUsleepForXCTest") == true, "\(captured)")
    }

    func testPassesAnAsyncTestThatAwaits() async throws {
        try XCTSkipUnless(usleepIsSeen(), "no detector starts here (ThreadSanitizer)")
        try await assertNoBlockingCalls { try await Task.sleep(for: .milliseconds(20)) }
    }
}
