import Foundation
import Glibc
import StallMonitorXCTest
import XCTest

/// Sleeps (blocked in `nanosleep`) for `milliseconds`: the stall the failure must name.
@inline(never)
func sleepPastTheBudgetInXCTest(milliseconds: Int) {
    usleep(UInt32(milliseconds) * 1000)
}

/// `assertNoStalls` in real XCTest tests. Failures are captured (`recordFailure` overridden) so
/// the expected one can be checked instead of failing the test; any other failure goes through.
final class AssertNoStallsTests: XCTestCase {
    private var captured: [String] = []
    private var capturing = false

    override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool) {
        if capturing && description.hasPrefix("Stall of ") {
            captured.append(description)
        } else {
            super.recordFailure(withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
        }
    }

    func testFailsATestWhoseLoopStallsPastTheBudget() throws {
        capturing = true
        try assertNoStalls(budget: .milliseconds(100)) {
            let worker = try ResidentLoopThread(name: "xctest-loop", monitor: StallBudget.configuration())
            defer { worker.stop() }
            try worker.performAndWait { sleepPastTheBudgetInXCTest(milliseconds: 400) }
        }
        capturing = false
        XCTAssertEqual(captured.count, 1, "\(captured)")
        let message = try XCTUnwrap(captured.first)
        XCTAssertTrue(message.contains("sleepPastTheBudgetInXCTest"), message)
        XCTAssertTrue(message.contains("exceeded the 100 ms stall budget"), message)
        let path = try XCTUnwrap(message.range(of: "; report: ").map { String(message[$0.upperBound...]) })
        XCTAssertTrue(FileManager.default.fileExists(atPath: path), "the failure names a report that is not there: \(path)")
        try FileManager.default.removeItem(at: URL(fileURLWithPath: path).deletingLastPathComponent())
    }

    func testPassesAQuietTest() throws {
        capturing = true
        let sum = try assertNoStalls(budget: .milliseconds(100)) {
            let worker = try ResidentLoopThread(name: "xctest-quiet", monitor: StallBudget.configuration())
            defer { worker.stop() }
            return try (0..<20).reduce(0) { total, value in try total + worker.performAndWait { value } }
        }
        capturing = false
        XCTAssertEqual(sum, 190)
        XCTAssertEqual(captured, [])
    }

    /// XCTest runs the main RunLoop while a test waits for an expectation: a stall of a timer on it
    /// counts against the budget.
    func testWatchesTheMainRunLoopWhileTheTestWaits() throws {
        capturing = true
        try assertNoStalls(budget: .milliseconds(100), watching: .mainRunLoop) {
            let fired = expectation(description: "timer fired")
            RunLoop.main.add(Timer(timeInterval: 0.01, repeats: false) { _ in
                sleepPastTheBudgetInXCTest(milliseconds: 400)
                fired.fulfill()
            }, forMode: .default)
            wait(for: [fired], timeout: 30)
        }
        capturing = false
        XCTAssertEqual(captured.count, 1, "\(captured)")
        XCTAssertTrue(captured.first?.contains("sleepPastTheBudgetInXCTest") == true, "\(captured)")
        XCTAssertTrue(captured.first?.contains("thread 'main'") == true || captured.first?.contains("runLoop thread") == true, "\(captured)")
        if let message = captured.first, let range = message.range(of: "; report: ") {
            try? FileManager.default.removeItem(at: URL(fileURLWithPath: String(message[range.upperBound...])).deletingLastPathComponent())
        }
    }
}
