import StallMonitor
import XCTest

extension XCTestCase {
    /// Runs `body` and fails the test once for every call it makes that blocks a thread that must
    /// not block for at least `threshold`: a Swift task's thread (`body` itself and the tasks it
    /// creates, `Task.detached` excepted) or a thread marked with
    /// ``BlockingCallDetector/markMustNotBlock(_:)``. Each failure names the call, how long it
    /// blocked, the thread and the stack from the call site up. Calls of other tests running beside
    /// it are not charged to it; calls inside ``BlockingCallDetector/allowBlocking(_:)``, or inside
    /// a function whose name contains one of `allowing`, are not counted.
    ///
    /// ```swift
    /// func testLoadsProfileWithoutBlocking() async throws {
    ///     let profile = try await assertNoBlockingCalls { try await store.profile(id: 42) }
    ///     XCTAssertEqual(profile.name, "Ada")
    /// }
    /// ```
    public func assertNoBlockingCalls<Result: Sendable>(
        threshold: Duration = .milliseconds(1), allowing: [String] = [],
        file: StaticString = #filePath, line: UInt = #line,
        _ body: () async throws -> Result
    ) async throws -> Result {
        let detector = try BlockingCallDetector.startScoped(configuration(threshold, allowing))
        let outcome: Swift.Result<Result, any Error>
        do {
            outcome = .success(try await detector.attributing { try await body() })
        } catch {
            outcome = .failure(error)
        }
        record(detector, file: file, line: line)
        return try outcome.get()
    }

    /// `assertNoBlockingCalls` for a synchronous body: the
    /// calling thread (XCTest's main thread for a synchronous test) is marked as one that must not
    /// block while `body` runs, so its own calls count as well as those of the tasks it creates.
    public func assertNoBlockingCalls<Result>(
        threshold: Duration = .milliseconds(1), allowing: [String] = [],
        file: StaticString = #filePath, line: UInt = #line,
        _ body: () throws -> Result
    ) throws -> Result {
        let detector = try BlockingCallDetector.startScoped(configuration(threshold, allowing))
        BlockingCallDetector.markMustNotBlock(true)
        let outcome = Swift.Result { try detector.attributing { try body() } }
        BlockingCallDetector.markMustNotBlock(false)
        record(detector, file: file, line: line)
        return try outcome.get()
    }

    private func configuration(_ threshold: Duration, _ allowing: [String]) -> BlockingCallDetector.Configuration {
        BlockingCallDetector.Configuration(
            threshold: threshold,
            allowedFunctions: BlockingCallDetector.Configuration.defaultAllowedFunctions + allowing)
    }

    /// Stops `detector` and records a failure for each of its calls.
    private func record(_ detector: BlockingCallDetector, file: StaticString, line: UInt) {
        let calls = detector.takeCalls()
        let dropped = detector.droppedCalls
        detector.stop()
        for call in calls {
            recordFailure(
                withDescription: "Blocking call: " + call.description, inFile: String(describing: file),
                atLine: Int(line), expected: true)
        }
        if dropped > 0 {
            recordFailure(
                withDescription: "Blocking call: \(dropped) more were not recorded (the recorder was full)",
                inFile: String(describing: file), atLine: Int(line), expected: true)
        }
    }
}
