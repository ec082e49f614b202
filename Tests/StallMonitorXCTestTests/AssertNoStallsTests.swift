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

    override func recordFailure(
        withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool
    ) {
        if capturing && (description.hasPrefix("Stall of ") || description.hasPrefix("Nothing was watched: ")) {
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
        XCTAssertTrue(
            FileManager.default.fileExists(atPath: path), "the failure names a report that is not there: \(path)")
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
            RunLoop.main.add(
                Timer(timeInterval: 0.01, repeats: false) { _ in
                    sleepPastTheBudgetInXCTest(milliseconds: 400)
                    fired.fulfill()
                }, forMode: .default)
            wait(for: [fired], timeout: 30)
        }
        capturing = false
        XCTAssertEqual(captured.count, 1, "\(captured)")
        XCTAssertTrue(captured.first?.contains("sleepPastTheBudgetInXCTest") == true, "\(captured)")
        XCTAssertTrue(
            captured.first?.contains("thread 'main'") == true || captured.first?.contains("runLoop thread") == true,
            "\(captured)")
        if let message = captured.first, let range = message.range(of: "; report: ") {
            try? FileManager.default.removeItem(
                at: URL(fileURLWithPath: String(message[range.upperBound...])).deletingLastPathComponent())
        }
    }

    /// An async body runs on the concurrency pool, which a budget that names no watch watches.
    func testFailsAnAsyncBodyThatBlocksTheConcurrencyPool() async throws {
        capturing = true
        try await assertNoStalls(budget: .milliseconds(250)) {
            sleepPastTheBudgetInXCTest(milliseconds: 400)
        }
        capturing = false
        let own = captured.filter { $0.contains("sleepPastTheBudgetInXCTest") }
        XCTAssertEqual(own.count, 1, "\(captured)")
        XCTAssertTrue(own.first?.contains("exceeded the 250 ms stall budget") == true, "\(captured)")
        XCTAssertFalse(captured.contains { $0.hasPrefix("Nothing was watched") }, "\(captured)")
        for message in captured {
            if let range = message.range(of: "; report: ") {
                try? FileManager.default.removeItem(
                    at: URL(fileURLWithPath: String(message[range.upperBound...])).deletingLastPathComponent())
            }
        }
    }

    /// A synchronous body that blocks its own thread never runs the thread's run loop, the only
    /// loop there is to watch: the budget fails saying nothing was watched, instead of passing.
    func testFailsASyncBodyThatBlocksItsOwnThreadSayingNothingWasWatched() throws {
        capturing = true
        try assertNoStalls(budget: .milliseconds(250)) {
            sleepPastTheBudgetInXCTest(milliseconds: 400)
        }
        capturing = false
        XCTAssertEqual(captured.count, 1, "\(captured)")
        let message = try XCTUnwrap(captured.first)
        XCTAssertTrue(
            message.hasPrefix(
                "Nothing was watched: none of the loops the 250 ms stall budget watched ran while the test did (runLoop)"
            ),
            message)
        XCTAssertTrue(message.contains("make the test `async`"), message)
    }

    /// The same body waiting for an expectation runs the run loop: watched, and quiet, it passes.
    func testPassesASyncBodyThatWaitsQuietly() throws {
        capturing = true
        try assertNoStalls(budget: .milliseconds(250)) {
            let fired = expectation(description: "timer fired")
            RunLoop.main.add(Timer(timeInterval: 0.01, repeats: false) { _ in fired.fulfill() }, forMode: .default)
            wait(for: [fired], timeout: 30)
        }
        capturing = false
        XCTAssertEqual(captured, [])
    }
}
