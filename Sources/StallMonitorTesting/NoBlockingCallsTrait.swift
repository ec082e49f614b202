import StallMonitor
import Testing

/// A Swift Testing trait that fails a test once for every call its code makes that blocks a
/// thread that must not block for at least the threshold: `@Test(.noBlockingCalls)`. On a suite
/// it applies to each of its tests.
///
/// Around each test (each case of a parameterized one) it starts a scoped
/// ``BlockingCallDetector``, runs the body with its calls attributed to it (child tasks and
/// unstructured `Task`s inherit the attribution, `Task.detached` does not), then records one
/// issue per call: the call, how long it blocked, the thread and the stack from the call site
/// up. Calls made by tests running beside it are not charged to it. Code that awaits instead
/// (`Task.sleep`, continuations, NIO's async file system) passes; so does a call inside
/// ``BlockingCallDetector/allowBlocking(_:)``.
public struct NoBlockingCallsTrait: TestTrait, SuiteTrait, TestScoping {
    /// What counts as a blocking call.
    public var configuration: BlockingCallDetector.Configuration

    /// Applied to a suite, the trait applies to each test in it.
    public var isRecursive: Bool { true }

    /// A trait recording calls as `configuration` says.
    public init(_ configuration: BlockingCallDetector.Configuration) {
        self.configuration = configuration
    }

    /// Runs `function` with a scoped detector and records an issue for each of its blocking calls.
    public func provideScope(
        for test: Test, testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        let detector: BlockingCallDetector
        do {
            detector = try BlockingCallDetector.startScoped(configuration)
        } catch {
            Issue.record(
                Comment(rawValue: "Blocking calls cannot be watched: \(error)"), sourceLocation: test.sourceLocation)
            try await function()
            return
        }
        var thrown: (any Error)?
        do {
            try await detector.attributing { try await function() }
        } catch {
            thrown = error
        }
        let calls = detector.takeCalls()
        let dropped = detector.droppedCalls
        detector.stop()
        for call in calls {
            Issue.record(Comment(rawValue: "Blocking call: " + call.description), sourceLocation: test.sourceLocation)
        }
        if dropped > 0 {
            Issue.record(
                Comment(rawValue: "Blocking call: \(dropped) more were not recorded (the recorder was full)"),
                sourceLocation: test.sourceLocation)
        }
        if let thrown { throw thrown }
    }

    /// For a test inside a suite that has the trait too, only the test's (the innermost) applies.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        guard testCase != nil else { return nil }
        guard let innermost = test.traits.last(where: { $0 is NoBlockingCallsTrait }) as? NoBlockingCallsTrait else {
            return self
        }
        return innermost.threshold == threshold
            && innermost.configuration.allowedFunctions == configuration.allowedFunctions ? self : nil
    }

    private var threshold: Duration { configuration.threshold }
}

extension Trait where Self == NoBlockingCallsTrait {
    /// Fails the test for every call its code makes that blocks a Swift task's thread (or a
    /// thread marked as one that must not block) for 1 ms or more.
    public static var noBlockingCalls: Self { noBlockingCalls(threshold: .milliseconds(1)) }

    /// Fails the test for every call its code makes that blocks a Swift task's thread (or a
    /// thread marked as one that must not block) for at least `threshold`; calls inside a
    /// function whose name contains one of `allowing` (added to the default allowed functions)
    /// are not counted.
    ///
    /// ```swift
    /// @Test(.noBlockingCalls(threshold: .milliseconds(2)))
    /// func loadsProfileWithoutBlocking() async throws {
    ///     let profile = try await store.profile(id: 42)   // fails if it reads the file synchronously
    ///     #expect(profile.name == "Ada")
    /// }
    /// ```
    public static func noBlockingCalls(threshold: Duration, allowing: [String] = []) -> Self {
        NoBlockingCallsTrait(
            BlockingCallDetector.Configuration(
                threshold: threshold,
                allowedFunctions: BlockingCallDetector.Configuration.defaultAllowedFunctions + allowing))
    }
}
