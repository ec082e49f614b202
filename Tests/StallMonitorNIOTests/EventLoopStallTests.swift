import Foundation
import NIOCore
import NIOPosix
import StallMonitor
import StallMonitorNIO
import Testing

/// StallMonitor watching every event loop of a real SwiftNIO server on loopback, driven by real
/// TCP clients.
@Suite("SwiftNIO event loops", .serialized)
struct EventLoopStallTests {
    @Test(
        "a 400 ms blocking handler gives exactly one report whose stack names the handler, also after the loops idled",
        arguments: [false, true])
    func blockingHandler(afterIdle: Bool) throws {
        try withMonitoredServer(loops: 2) { reports, server, monitor in
            let client = try HTTPTestClient(port: server.port)
            let loopThread = try client.get("/whoami")
            #expect(try client.get("/fast") == "ok")
            if afterIdle {
                usleep(500_000)
                let before = monitor.statistics.watchdogWakeups
                usleep(4_500_000)
                let wakeups = monitor.statistics.watchdogWakeups - before
                // Looked at every 20 ms this would be about 225; with a look every 2 s, 2 or more. A
                // monitor of loops that all wait in the shim's epoll_wait parks: at most the silence
                // check (3 s after the start, if a loop has not run yet) wakes it. Where a sanitizer
                // runtime's epoll_wait won the link the loops cannot wake it: looked at.
                if Kernel.epollWaitWakesWatchdog {
                    #expect(wakeups <= 1, "\(wakeups) watchdog wake-ups in 4.5 s of idle loops")
                } else {
                    #expect(wakeups >= 10, "\(wakeups) watchdog wake-ups in 4.5 s of loops it must look at")
                }
            }
            let measured = try #require(Double(try client.get("/block?ms=400")))
            #expect(try client.get("/fast") == "ok")
            #expect(monitor.flush(timeout: .seconds(10)))
            monitor.stop()

            let written = try reports.reports()
            try #require(written.count == 1, "\(written.map(\.durationMs))")
            let report = written[0]
            #expect(report.loop.kind == StallMonitor.nioEventLoopKind)
            #expect(report.loop.threadName.hasPrefix("NIO-ELT-"))
            #expect("\(report.loop.threadID)" == loopThread)
            #expect(report.representativeFunction.contains("blockTheLoopForTest"), "\(report.representativeFunction)")
            // The handler's own clock: the span holds the handler, its end exactly. A loop that waits
            // in the shim's epoll_wait has its returns timed, so the span starts at the return before
            // the request was read: never shorter than the handler. Else the sleep's start is dated
            // to half the time between two looks (10 ms when the watchdog keeps its interval).
            #expect(fits(report.durationMs, measured), "report \(report.durationMs) ms, handler \(measured) ms")
            if Kernel.epollWaitWakesWatchdog {
                #expect(report.durationMs >= measured - 1, "report \(report.durationMs) ms, handler \(measured) ms")
            }
            #expect(monitor.watchedLoops.count == 2 && monitor.watchedLoops.allSatisfy(\.hasRun))
        }
    }

    @Test("thousands of fast requests on every loop under load give no report")
    func fastRequestsUnderLoad() throws {
        try withMonitoredServer(loops: 2, threshold: .milliseconds(400)) { reports, server, monitor throws in
            let clients = 4
            let requestsEach = 750
            let failures = LockedList<String>()
            DispatchQueue.concurrentPerform(iterations: clients) { _ in
                do {
                    let client = try HTTPTestClient(port: server.port)
                    for _ in 0..<requestsEach where try client.get("/fast") != "ok" { failures.append("wrong body") }
                } catch {
                    failures.append("\(error)")
                }
            }
            #expect(failures.items.isEmpty, "\(failures.items.prefix(3))")
            #expect(monitor.flush(timeout: .seconds(10)))
            monitor.stop()
            let statistics = monitor.statistics
            #expect(statistics.stallsDetected == 0)
            #expect(try reports.reports().isEmpty)
            // The loops were busy: the probe saw spans on them.
            #expect(statistics.spans > 0)
        }
    }

    @Test("two loops stalling at once give two reports, each with its own loop")
    func twoLoopsAtOnce() throws {
        try withMonitoredServer(loops: 2) { reports, server, monitor in
            // Connections are spread over the loops; keep one on each.
            var byLoop: [String: HTTPTestClient] = [:]
            for _ in 0..<16 where byLoop.count < 2 {
                let client = try HTTPTestClient(port: server.port)
                let tid = try client.get("/whoami")
                if byLoop[tid] == nil { byLoop[tid] = client }
            }
            try #require(byLoop.count == 2)
            let clients = Array(byLoop.values)
            let failures = LockedList<String>()
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                do { _ = try clients[index].get("/block?ms=450") } catch { failures.append("\(error)") }
            }
            #expect(failures.items.isEmpty)
            #expect(monitor.flush(timeout: .seconds(10)))
            monitor.stop()

            let written = try reports.reports()
            try #require(written.count == 2, "\(written.map { "\($0.loop.threadName) \($0.durationMs)" })")
            #expect(Set(written.map(\.loop.threadID)).count == 2)
            #expect(Set(written.map { "\($0.loop.threadID)" }) == Set(byLoop.keys))
            #expect(written.allSatisfy { $0.representativeFunction.contains("blockTheLoopForTest") })
            // At the same time: the spans overlap.
            let spans = written.map { ($0.startedAt, $0.startedAt.addingTimeInterval($0.durationMs / 1000)) }
            #expect(spans[0].0 < spans[1].1 && spans[1].0 < spans[0].1)
        }
    }

    @Test("a stall in a task run on the loop (execute, scheduleTask) is reported too")
    func stallInTasks() throws {
        try withMonitoredServer(loops: 1) { reports, server, monitor in
            let loop = server.group.next()
            let executed = try loop.submit { TestHandlers.spinInLoopTaskForTest(milliseconds: 400) }.wait()
            Thread.sleep(forTimeInterval: 0.1)
            let scheduled = try loop.scheduleTask(in: .milliseconds(5)) {
                TestHandlers.blockTheLoopForTest(milliseconds: 400)
            }
            .futureResult.wait()
            Thread.sleep(forTimeInterval: 0.1)
            #expect(monitor.flush(timeout: .seconds(10)))
            monitor.stop()

            let written = try reports.reports().sorted { $0.startedAt < $1.startedAt }
            try #require(written.count == 2, "\(written.map(\.durationMs))")
            #expect(written[0].representativeFunction.contains("spinInLoopTaskForTest"))
            #expect(written[0].classification == .cpu)
            #expect(fits(written[0].durationMs, executed), "report \(written[0].durationMs) ms, task \(executed) ms")
            #expect(written[1].representativeFunction.contains("blockTheLoopForTest"))
            #expect(fits(written[1].durationMs, scheduled), "report \(written[1].durationMs) ms, task \(scheduled) ms")
        }
    }

    @Test("work declared with expectLongWork on a loop is not reported")
    func expectedLongWork() throws {
        try withMonitoredServer(loops: 1) { reports, server, monitor in
            let loop = server.group.next()
            Thread.sleep(forTimeInterval: 0.1)
            _ = try loop.submit { monitor.expectLongWork { TestHandlers.blockTheLoopForTest(milliseconds: 400) } }
                .wait()
            Thread.sleep(forTimeInterval: 0.1)
            #expect(monitor.flush(timeout: .seconds(10)))
            monitor.stop()
            #expect(try reports.reports().isEmpty)
            #expect(monitor.statistics.expectedLongWork == 1)
        }
    }

    @Test("the monitor stops cleanly while a loop is stalled, and the group shuts down after it")
    func stopDuringStall() throws {
        let reports = TemporaryReports()
        defer { reports.remove() }
        let server = try LoopbackHTTPServer(loops: 1)
        let monitor = try StallMonitor.start(
            reports.configuration(), eventLoopGroup: server.group, concurrencyPool: false)
        let done = server.group.next().submit { TestHandlers.blockTheLoopForTest(milliseconds: 600) }
        Thread.sleep(forTimeInterval: 0.4)
        monitor.stop()
        _ = try done.wait()
        server.shutDown()
        let written = try reports.reports()
        #expect(written.count == 1)
        #expect(written.first?.status == .ended)
    }
}

/// `withLoopbackServer` with a monitor (started here, with `threshold`) watching the server's
/// event loops and not the pool; the test stops the monitor itself.
private func withMonitoredServer<T>(
    loops: Int,
    threshold: Duration = .milliseconds(250),
    _ body: (TemporaryReports, LoopbackHTTPServer, StallMonitor) throws -> T
) throws -> T {
    try withLoopbackServer(loops: loops) { reports, server in
        let monitor = try StallMonitor.start(
            reports.configuration(threshold: threshold), eventLoopGroup: server.group, concurrencyPool: false)
        return try body(reports, server, monitor)
    }
}

/// Whether a report's duration fits work timed by the stalled code itself: at most 30 ms shorter
/// (a blocking stall's start is dated to half the time between two looks of the watchdog, which a
/// loaded machine stretches; a CPU-bound one's to the kernel's last update of the thread's run
/// time) and at most 80 ms longer (parsing the request, writing the answer, the token's turn).
func fits(_ reportMs: Double, _ measuredMs: Double) -> Bool {
    reportMs >= measuredMs - 30 && reportMs <= measuredMs + 80
}
