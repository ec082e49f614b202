import Foundation
import MetricsTestKit
import StallMonitor
import StallMonitorNIO
import Testing

/// The monitor's swift-metrics for SwiftNIO event loops (the pull probe), through MetricsTestKit's
/// `TestMetrics` passed in the configuration.
@Suite("SwiftNIO event loop metrics", .serialized)
struct EventLoopMetricsTests {
    @Test("a blocked event loop's stall is timed and counted under its loop's name; every loop gets a utilisation")
    func blockedLoop() throws {
        try withLoopbackServer(loops: 2) { reports, server in
            let metrics = TestMetrics()
            let monitor = try StallMonitor.start(
                reports.configuration(metrics: metrics), eventLoopGroup: server.group, concurrencyPool: false)
            defer { monitor.stop() }
            let client = try HTTPTestClient(port: server.port)
            #expect(try client.get("/fast") == "ok")
            _ = try client.get("/block?ms=400")
            #expect(try client.get("/fast") == "ok")
            #expect(monitor.flush(timeout: .seconds(10)))
            monitor.stop()

            let report = try #require(try reports.reports().first)
            let timers = metrics.timers(label: "stallmonitor.stall.duration")
            try #require(timers.count == 1 && timers[0].values.count == 1, "\(timers.map(\.dimensions))")
            #expect(abs(Double(timers[0].values[0]) / 1e6 - report.durationMs) < 1)
            let loop = [("loop.kind", StallMonitor.nioEventLoopKind), ("loop.name", report.loop.threadName)]
            #expect(report.loop.threadName.hasPrefix("NIO-ELT-"))
            #expect(
                Dictionary(uniqueKeysWithValues: timers[0].dimensions)
                    == Dictionary(uniqueKeysWithValues: loop + [("classification", report.classification.rawValue)]))
            #expect(metrics.counterTotal(label: "stallmonitor.stalls", dimensions: loop) == 1)

            let gauges = metrics.recorders(label: "stallmonitor.loop.utilization")
            #expect(Set(gauges.compactMap { $0.dimensions.first { $0.0 == "loop.name" }?.1 }).count == 2)
            #expect(gauges.allSatisfy { $0.values.allSatisfy { (0...1).contains($0) } })
            // 400 ms blocked out of the few seconds the monitor ran at most.
            let blocked = try metrics.expectGauge("stallmonitor.loop.utilization", loop)
            #expect((blocked.lastValue ?? 0) > 0.02, "\(blocked.values)")
        }
    }
}
