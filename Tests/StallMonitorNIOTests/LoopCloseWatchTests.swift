import Foundation
import NIOCore
import NIOPosix
import Synchronization
import Testing

@testable import StallMonitorNIO

/// The watch that tells the probe an event loop is closing, on real SwiftNIO loops.
@Suite("LoopCloseWatch", .serialized)
struct LoopCloseWatchTests {
    /// Counts the watch's calls.
    private final class Calls: Sendable {
        let count = Atomic<Int>(0)
        func note() { count.add(1, ordering: .relaxed) }
        var value: Int { count.load(ordering: .relaxed) }
    }

    @Test("a loop that shuts down says so by the time its shutdown returns, once")
    func shutdownIsSeen() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let calls = Calls()
        let watch = LoopCloseWatch(loop: loop) { calls.note() }
        // The pipe channel is registered on the loop: a task queued after it runs after it.
        try await loop.submit {}.get()
        #expect(calls.value == 0)
        try await group.shutdownGracefully()
        #expect(calls.value == 1, "the watch did not see its loop close")
        watch.cancel()  // after the loop closed: nothing more
        #expect(calls.value == 1)
    }

    @Test("cancelling the watch (the monitor stops) closes its channel and says so once; the loop runs on")
    func cancelStops() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let calls = Calls()
        let watch = LoopCloseWatch(loop: loop) { calls.note() }
        try await loop.submit {}.get()
        watch.cancel()
        for _ in 0..<500 where calls.value == 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(calls.value == 1)
        let ran = try await loop.submit { true }.get()
        #expect(ran)
        try await group.shutdownGracefully()
        #expect(calls.value == 1)
    }

    @Test("a watch cancelled before its channel was registered leaves nothing behind")
    func cancelledAtOnce() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let calls = Calls()
        // Registration is queued on the loop: hold the loop so the cancel comes first.
        let release = DispatchSemaphore(value: 0)
        loop.execute { release.wait() }
        let watch = LoopCloseWatch(loop: loop) { calls.note() }
        watch.cancel()
        release.signal()
        try await loop.submit {}.get()
        for _ in 0..<500 where calls.value == 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(calls.value == 1, "the channel registered after the cancel was closed")
        try await group.shutdownGracefully()
        #expect(calls.value == 1)
    }
}
