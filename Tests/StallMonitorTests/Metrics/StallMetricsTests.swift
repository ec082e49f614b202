import Foundation
import Metrics
import MetricsTestKit
import StallMonitor
import StallReportModel
import Testing

/// The monitor's swift-metrics, observed through MetricsTestKit's `TestMetrics` passed in the
/// configuration (never bootstrapped globally), for real stalls of real run loop threads.
@Suite("swift-metrics", .serialized)
struct StallMetricsTests {
    @Test("a stall gives one duration close to its report's, one count, with loop and classification dimensions only")
    func stallDurationAndCount() throws {
        let metrics = TestMetrics()
        try withMonitoredLoop(
            "metrics-stall",
            configure: { configuration in
                configuration.metrics = .init(factory: metrics, dimensions: [("service", "tests")])
            }
        ) { directory, loop, monitor in
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 400) }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            monitor.stop()

            let report = try #require(try directory.reports().first)
            let timers = metrics.timers(label: "stallmonitor.stall.duration")
            try #require(timers.count == 1, "\(timers.map(\.dimensions))")
            let timer = timers[0]
            try #require(timer.values.count == 1)
            let seconds = Double(timer.values[0]) / 1e9
            #expect(abs(seconds * 1000 - report.durationMs) < 1, "timer \(seconds) s, report \(report.durationMs) ms")
            #expect(seconds >= 0.35 && seconds < 10, "\(seconds) s for a 400 ms spin")
            #expect(timer.displayUnit == .seconds)
            let expected = [
                "service": "tests", "loop.kind": "runLoop", "loop.name": "metrics-stall",
                "classification": report.classification.rawValue,
            ]
            #expect(Dictionary(uniqueKeysWithValues: timer.dimensions) == expected)
            #expect(metrics.counterTotal(label: "stallmonitor.stalls", dimensions: Array(expected)) == 1)
            #expect(metrics.counterTotal(label: "stallmonitor.stalls") == 1)

            // Every drop reason is there from the start, at zero here.
            let dropped = metrics.counters(label: "stallmonitor.reports.dropped")
            #expect(
                Set(dropped.compactMap { $0.dimensions.first { $0.0 == "reason" }?.1 }) == [
                    "rateLimitedToSummary", "deletedForQuota", "reportWrite", "reportEncoding", "watchdogStarved",
                    "debuggerAttached", "processStopped",
                ])
            #expect(metrics.counterTotal(label: "stallmonitor.reports.dropped") == 0)

            // Low cardinality: no fingerprint, thread id or path in any dimension of any metric.
            let everyDimension =
                metrics.timers.flatMap(\.dimensions) + metrics.counters.flatMap(\.dimensions)
                + metrics.recorders.flatMap(\.dimensions)
            let forbidden = [report.fingerprint, "\(report.loop.threadID)", directory.url.path]
            for (key, value) in everyDimension {
                #expect(!forbidden.contains(value), "\(key)=\(value)")
                #expect(!key.contains("fingerprint") && !key.contains("thread.id") && !key.contains("path"), "\(key)")
            }
        }
    }

    @Test("a stall past maxReportsPerFingerprint is counted as dropped, rate limited; every stall is timed")
    func rateLimitedReportCountedAsDropped() throws {
        let metrics = TestMetrics()
        try withMonitoredLoop(
            "metrics-rate",
            configure: { configuration in
                configuration.maxReportsPerFingerprint = 1
                configuration.metrics = .init(factory: metrics)
            }
        ) { directory, loop, monitor in
            // One closure, one call site, a spin that calls nothing: the same fingerprint each time
            // (three stalls: even if a loaded machine gave one of them another, two would share one).
            let stall: @Sendable () -> Void = { ProductionWork.spinWithoutCallsForRateLimit(milliseconds: 320) }
            for count in 1...3 {
                try loop.run(stall)
                #expect(monitor.waitForStalls(count), "\(monitor.statistics)")
            }
            let reports = try directory.reports()
            try #require(reports.count == 3)
            let compact = reports.filter { $0.rateLimited == true }.count
            #expect(compact >= 1, "\(reports.map(\.fingerprint))")
            #expect(monitor.statistics.reportsRateLimited == compact)
            #expect(
                metrics.counterTotal(
                    label: "stallmonitor.reports.dropped", dimensions: [("reason", "rateLimitedToSummary")])
                    == Int64(compact))
            #expect(metrics.counterTotal(label: "stallmonitor.reports.dropped") == Int64(compact))
            #expect(metrics.counterTotal(label: "stallmonitor.stalls") == 3)
            #expect(metrics.timers(label: "stallmonitor.stall.duration").flatMap(\.values).count == 3)
        }
    }

    @Test("a busy loop's utilisation and active time rise; an idle loop's stay near zero")
    func loopUtilisation() throws {
        try withReportDirectories("busy", "idle") { busyDirectory, idleDirectory in
            let busyMetrics = TestMetrics()
            let idleMetrics = TestMetrics()
            let busy = try MonitoredLoopThread(name: "metrics-busy")
            let idle = try MonitoredLoopThread(name: "metrics-idle")
            defer {
                busy.stop()
                idle.stop()
            }
            // A threshold no span here reaches: only the loop times are looked at. The session
            // heartbeat (at least 1 s) is when they are emitted, and once more at stop.
            func configuration(_ directory: ReportDirectory, _ metrics: TestMetrics) -> StallMonitor.Configuration {
                var configuration = directory.configuration(threshold: .seconds(30))
                configuration.sessionHeartbeatInterval = .seconds(1)
                configuration.metrics = .init(factory: metrics)
                return configuration
            }
            let busyMonitor = try busy.startMonitor(configuration(busyDirectory, busyMetrics))
            defer { busyMonitor.stop() }
            let idleMonitor = try idle.startMonitor(configuration(idleDirectory, idleMetrics))
            defer { idleMonitor.stop() }

            // 2.5 s awake, so at least one heartbeat interval lies wholly inside the busy time.
            let spun = measureMilliseconds { try? busy.run { StallingWork.spinOnCPUForStallTest(milliseconds: 2_500) } }
            busyMonitor.stop()
            idleMonitor.stop()
            #expect(spun >= 2_500)

            let busyLoop = [("loop.kind", "runLoop"), ("loop.name", "metrics-busy")]
            let busyUtilisation = try busyMetrics.expectGauge("stallmonitor.loop.utilization", busyLoop).values
            #expect(busyUtilisation.count >= 2, "\(busyUtilisation)")  // heartbeats and the stop
            #expect(busyUtilisation.allSatisfy { (0...1).contains($0) }, "\(busyUtilisation)")
            #expect((busyUtilisation.max() ?? 0) >= 0.5, "\(busyUtilisation)")
            // Seconds, in whole units with TestMetrics (swift-metrics' default floating-point counter
            // rounds for backends without one): 2.5 s awake is at least 1.
            #expect(
                busyMetrics.counterTotal(
                    label: "stallmonitor.loop.time", dimensions: busyLoop + [("loop.state", "active")])
                    >= 1)

            let idleLoop = [("loop.kind", "runLoop"), ("loop.name", "metrics-idle")]
            let idleUtilisation = try idleMetrics.expectGauge("stallmonitor.loop.utilization", idleLoop).values
            #expect(!idleUtilisation.isEmpty)
            #expect(idleUtilisation.allSatisfy { (0...0.2).contains($0) }, "\(idleUtilisation)")
            #expect(
                idleMetrics.counterTotal(
                    label: "stallmonitor.loop.time", dimensions: idleLoop + [("loop.state", "active")])
                    == 0)
            #expect(
                idleMetrics.counterTotal(
                    label: "stallmonitor.loop.time", dimensions: idleLoop + [("loop.state", "idle")])
                    >= 1)
        }
    }
}

/// `loop.name` names the loop, whichever thread ran it: the MainActor's main queue and the pool
/// are drained by Dispatch workers whose names say nothing of the loop.
@Suite("swift-metrics loop names")
struct StallMetricsLoopNameTests {
    @Test("main for the main thread and the MainActor, pool for the pool, else the loop thread's name")
    func loopNames() {
        #expect(StallMetrics.loopName(kind: "runLoop", threadName: "async-main-ho", isMainThread: true) == "main")
        #expect(
            StallMetrics.loopName(kind: "runLoop", threadName: "metrics-stall", isMainThread: false) == "metrics-stall")
        #expect(
            StallMetrics.loopName(kind: "nioEventLoop", threadName: "NIO-ELT-0-#1", isMainThread: false)
                == "NIO-ELT-0-#1")
        #expect(StallMetrics.loopName(kind: "mainActor", threadName: "-qos.overcommit", isMainThread: false) == "main")
        #expect(
            StallMetrics.loopName(kind: "concurrencyPool", threadName: "oot.default-qos", isMainThread: false) == "pool"
        )
    }
}
