import CStallMonitor
import CoreFoundation
import Dispatch
import Foundation
import Synchronization
import Testing
import ToolSupport

@testable import StallMonitor

/// The RunLoop place of the blocking-call ground truth: timers of a watched RunLoop whose
/// callouts block for known lengths are each recorded once, as long as the callout's own clock
/// says, with a stack that names the callout's function; timers that let the loop wait between
/// them instead (CoreFoundation's own `ppoll`) give no record.
@Suite("Blocking calls: RunLoop timer ground truth", .serialized, .enabled(if: BlockingVisibility.executableCallsSeen))
struct BlockingRunLoopTimerTests {
    /// A timer's callout that blocks in usleep for `milliseconds`; the callout's own clock (ms).
    @inline(never) static func blockInRunLoopTimerForTest(milliseconds: Int) -> CallerClock {
        BlockingGroundTruthTests.timedUsleep(milliseconds: milliseconds)
    }

    @Test(
        "timers blocking 2, 5, 20 and 100 ms: each recorded once, within its request and its own clock, naming its function; waiting timers give none"
    )
    func timersOnAWatchedRunLoop() throws {
        let lengths = [2, 5, 20, 100]
        let detector = try BlockingCallDetector.start(.init(threshold: .milliseconds(1)))
        defer { detector.stop() }
        try withMonitoredLoop("blocking-timers") { _, loop, _ in
            let thread = try loop.run { CStallMonitor_gettid() }
            let measured = Mutex<[CallerClock]>([])
            let fired = DispatchSemaphore(value: 0)
            try loop.run {
                // Each blocking timer is followed by a control that fires `length` ms later: the
                // loop waits for it in its own ppoll. (CoreFoundation's timers: a block-based
                // Foundation Timer that fired once is never freed, which LeakSanitizer reports.)
                var fireAt = CFAbsoluteTimeGetCurrent() + 0.02
                for length in lengths {
                    let blocking = CFRunLoopTimerCreateWithHandler(nil, fireAt, 0, 0, 0) { _ in
                        let own = Self.blockInRunLoopTimerForTest(milliseconds: length)
                        measured.withLock { $0.append(own) }
                        fired.signal()
                    }
                    fireAt += Double(length) / 1000 + 0.01
                    let waiting = CFRunLoopTimerCreateWithHandler(nil, fireAt + Double(length) / 1000, 0, 0, 0) { _ in
                        fired.signal()
                    }
                    fireAt += 2 * Double(length) / 1000 + 0.01
                    CFRunLoopAddTimer(CFRunLoopGetCurrent(), blocking, kCFRunLoopDefaultMode)
                    CFRunLoopAddTimer(CFRunLoopGetCurrent(), waiting, kCFRunLoopDefaultMode)
                }
            }
            for _ in 0..<(2 * lengths.count) {
                #expect(fired.wait(timeout: .now() + 10) == .success)
            }
            let calls = detector.takeCalls().filter { $0.threadID == thread }
            let timed = calls.filter { call in
                call.frames.contains { $0.function?.contains("blockInRunLoopTimerForTest") == true }
            }
            let own = measured.withLock { $0 }
            try #require(timed.count == lengths.count, "\(timed.count) recorded for \(own.count) calls: \(calls)")
            for ((call, ownClock), length) in zip(zip(timed, own), lengths) {
                let recorded =
                    Double(call.duration.components.attoseconds) / 1e15
                    + Double(call.duration.components.seconds) * 1000
                #expect(call.call == "usleep" && !call.inTask)
                #expect(
                    ownClock.admits(recorded, sleeping: Double(length)),
                    "recorded \(recorded) ms for a \(length) ms sleep, the callout's clock \(ownClock)")
            }
            #expect(
                !calls.contains { ["ppoll", "poll", "epoll_wait"].contains($0.call) },
                "the loop's own waits are never recorded: \(calls)")
        }
    }
}
