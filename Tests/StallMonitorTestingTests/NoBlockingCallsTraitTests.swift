import Dispatch
import Foundation
import Glibc
import StallMonitorTesting
import Testing

/// Work with names of its own, for the trait's messages.
enum BlockingTraitWork {
    @inline(never) static func blockInUsleepForTraitTest() {
        usleep(15_000)
    }
}

/// `.noBlockingCalls`, its scope run directly (as Swift Testing runs it around a test) inside
/// `withKnownIssue` where the body blocks: the canary that shows the trait fails such a test.
@Suite struct NoBlockingCallsTraitTests {
    /// Whether the test executable's own calls pass its GOT (not under a sanitizer).
    private static let executableCallsSeen: Bool = {
        guard let detector = try? BlockingCallDetector.startScoped() else { return false }
        defer { detector.stop() }
        return !detector.callsUnseenInExecutable.contains("usleep")
    }()

    @Test(
        "a test whose code calls usleep in its task fails, naming the call, its length and the call site",
        .enabled(if: executableCallsSeen))
    func canary() async throws {
        let messages = Collected()
        try await withKnownIssue {
            try await NoBlockingCallsTrait.noBlockingCalls.provideScope(for: Test.current!, testCase: Test.Case.current)
            {
                BlockingTraitWork.blockInUsleepForTraitTest()
            }
        } matching: { issue in
            let text = issue.comments.map(\.rawValue).joined(separator: " ")
            guard text.hasPrefix("Blocking call: ") else { return false }
            messages.append(text)
            return true
        }
        let all = messages.all
        #expect(all.count == 1, "\(all)")
        #expect(all.first?.hasPrefix("Blocking call: usleep blocked ") == true, "\(all)")
        #expect(all.first?.contains("blockInUsleepForTraitTest") == true, "\(all)")
    }

    @Test(
        "a test whose code awaits (Task.sleep, a continuation, a child task) records nothing",
        .enabled(if: executableCallsSeen))
    func awaitingPasses() async throws {
        try await NoBlockingCallsTrait.noBlockingCalls.provideScope(for: Test.current!, testCase: Test.Case.current) {
            try await Task.sleep(for: .milliseconds(20))
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { continuation.resume() }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await Task.sleep(for: .milliseconds(10)) }
                try await group.waitForAll()
            }
        }
    }

    @Test(
        "a call inside allowBlocking, or in a function the trait allows, records nothing",
        .enabled(if: executableCallsSeen))
    func allowedPasses() async throws {
        try await NoBlockingCallsTrait.noBlockingCalls.provideScope(for: Test.current!, testCase: Test.Case.current) {
            BlockingCallDetector.allowBlocking { BlockingTraitWork.blockInUsleepForTraitTest() }
        }
        try await NoBlockingCallsTrait.noBlockingCalls(
            threshold: .milliseconds(1), allowing: ["blockInUsleepForTraitTest"]
        )
        .provideScope(for: Test.current!, testCase: Test.Case.current) {
            BlockingTraitWork.blockInUsleepForTraitTest()
        }
    }
}
