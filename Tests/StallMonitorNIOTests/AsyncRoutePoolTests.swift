import Foundation
import MetricsTestKit
import NIOCore
import NIOPosix
import StallMonitor
import StallMonitorNIO
import Testing

/// A server whose routes run as tasks on the Swift concurrency pool (as Vapor 4 runs `async`
/// routes and Hummingbird 2 every route), watched with `start(_:eventLoopGroup:)`, which watches
/// the pool too. The clients run on threads of their own and the test bodies only await, so the
/// test's own code never holds a pool worker.
@Suite("Async routes on the concurrency pool", .serialized)
struct AsyncRoutePoolTests {
    @Test("a 400 ms blocking async route gives exactly one report, on a pool worker, whose stack names the route")
    func blockingAsyncRoute() async throws {
        try await withLoopbackServer(loops: 2) { reports, server in
            let metrics = TestMetrics()
            let monitor = try StallMonitor.start(reports.configuration(metrics: metrics), eventLoopGroup: server.group)
            let answers = try await Self.onThread { () throws -> [String] in
                let client = try HTTPTestClient(port: server.port)
                return [
                    try client.get("/async-fast"), try client.get("/async-block?ms=400"), try client.get("/async-fast"),
                ]
            }
            #expect(answers[0] == "ok" && answers[2] == "ok")
            let measured = try #require(Double(answers[1]))
            #expect(await monitor.flush(timeout: .seconds(10)))
            await monitor.stop()

            let written = try reports.reports()
            try #require(
                written.count == 1, "\(written.map { ($0.loop.kind, $0.durationMs, $0.representativeFunction) })")
            let report = written[0]
            #expect(report.loop.kind == StallMonitor.concurrencyPoolKind)
            #expect(!report.loop.threadName.hasPrefix("NIO-"), "\(report.loop.threadName)")
            #expect(
                report.representativeStack.contains {
                    report.frames[$0].symbol?.contains("blockInAsyncRouteForTest") == true
                },
                "\(report.representativeFunction)")
            #expect(
                report.durationMs >= measured - 60 && report.durationMs <= measured + 300,
                "report \(report.durationMs) ms, route \(measured) ms")
            #expect(
                monitor.watchedLoops.map(\.kind) == [
                    StallMonitor.nioEventLoopKind, StallMonitor.nioEventLoopKind, StallMonitor.concurrencyPoolKind,
                ])
            // The stall's metrics name the pool, not the worker thread that happened to run the route.
            let stallDimensions = metrics.counters(label: "stallmonitor.stalls").map {
                Dictionary(uniqueKeysWithValues: $0.dimensions)
            }
            #expect(
                stallDimensions == [
                    [
                        "loop.kind": StallMonitor.concurrencyPoolKind, "loop.name": "pool",
                        "classification": report.classification.rawValue,
                    ]
                ])
        }
    }

    @Test("thousands of fast async requests from four clients give no report")
    func fastAsyncRequestsUnderLoad() async throws {
        try await withLoopbackServer(loops: 2) { reports, server in
            let monitor = try StallMonitor.start(
                reports.configuration(threshold: .milliseconds(400)), eventLoopGroup: server.group)
            let failures = try await Self.onThread { () -> [String] in
                // Four client threads of their own (concurrentPerform would run them on pool workers).
                let failures = LockedList<String>()
                let done = DispatchGroup()
                for _ in 0..<4 {
                    done.enter()
                    Thread {
                        defer { done.leave() }
                        do {
                            let client = try HTTPTestClient(port: server.port)
                            for _ in 0..<750 where try client.get("/async-fast") != "ok" {
                                failures.append("wrong body")
                            }
                        } catch {
                            failures.append("\(error)")
                        }
                    }.start()
                }
                done.wait()
                return failures.items
            }
            #expect(failures.isEmpty, "\(failures.prefix(3))")
            #expect(await monitor.flush(timeout: .seconds(10)))
            await monitor.stop()
            #expect(monitor.statistics.stallsDetected == 0)
            #expect(try reports.reports().isEmpty)
        }
    }

    /// Runs `body` on a thread of its own (not a pool worker) and awaits its result.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try body() }) }
            thread.start()
        }
    }
}
