import Foundation
import NIOCore
import NIOPosix
import StallMonitor
import StallMonitorNIO
import Testing

/// Whether the test executable's own calls pass its GOT (not under a sanitizer, whose runtime in
/// the executable defines the same functions).
private let executableCallsSeen: Bool = {
    guard let detector = try? BlockingCallDetector.startScoped() else { return false }
    defer { detector.stop() }
    return !detector.callsUnseenInExecutable.contains("usleep")
}()

/// Blocking calls far below the stall threshold, on a real SwiftNIO server on loopback driven by
/// a real client: a watched event loop's handler and an async route's task are both threads that
/// must not block; the same server unwatched records nothing from its loops.
@Suite("Blocking calls on SwiftNIO event loops", .serialized, .enabled(if: executableCallsSeen))
struct BlockingCallsOnEventLoopTests {
    private func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    /// The calls made in `function` (on `thread`, when given: tests beside this one block elsewhere).
    private func handlerCalls(
        _ detector: BlockingCallDetector, in function: String = "blockTheLoopForTest",
        on thread: Int32? = nil
    ) -> [BlockingCall] {
        detector.takeCalls().filter { call in
            call.frames.contains { $0.function?.contains(function) == true }
                && (thread == nil || call.threadID == thread)
        }
    }

    @Test(
        "a 10 ms usleep in a watched loop's handler is recorded once, as long as the handler measured it; unwatched, not at all"
    )
    func handlerOnWatchedLoop() throws {
        let reports = TemporaryReports()
        defer { reports.remove() }
        let server = try LoopbackHTTPServer(loops: 1)
        defer { server.shutDown() }
        let detector = try BlockingCallDetector.start(.init(threshold: .milliseconds(5)))
        defer { detector.stop() }
        let client = try HTTPTestClient(port: server.port)
        let loopThread = try #require(Int32(try client.get("/whoami")))
        func handlerCalls(_ detector: BlockingCallDetector) -> [BlockingCall] {
            self.handlerCalls(detector, on: loopThread)
        }
        _ = try client.get("/block?ms=10")
        #expect(handlerCalls(detector).isEmpty, "the loop is not watched yet")
        let monitor = try StallMonitor.start(
            reports.configuration(), eventLoopGroup: server.group, concurrencyPool: false)
        _ = try client.get("/fast")  // the loop ran the probe's arming task
        let measured = try #require(Double(try client.get("/block?ms=10")))
        let calls = handlerCalls(detector)
        try #require(calls.count == 1, "\(calls)")
        #expect(calls[0].call == "usleep")
        #expect(
            milliseconds(calls[0].duration) >= 10 && milliseconds(calls[0].duration) <= measured + 0.1,
            "recorded \(milliseconds(calls[0].duration)) ms, the handler measured \(measured) ms")
        monitor.stop()
        _ = try client.get("/block?ms=10")
        #expect(handlerCalls(detector).isEmpty, "the loop is no longer watched")
        #expect(try reports.reports().isEmpty, "10 ms is no stall")
    }

    @Test("a 10 ms usleep in an async route's task is recorded without any monitor")
    func asyncRoute() throws {
        let server = try LoopbackHTTPServer(loops: 1)
        defer { server.shutDown() }
        let detector = try BlockingCallDetector.start(.init(threshold: .milliseconds(5)))
        defer { detector.stop() }
        let client = try HTTPTestClient(port: server.port)
        _ = try client.get("/async-block?ms=10")
        let calls = handlerCalls(detector, in: "blockInAsyncRouteForTest")
        try #require(calls.count == 1, "\(calls)")
        #expect(calls[0].inTask)
    }
}
