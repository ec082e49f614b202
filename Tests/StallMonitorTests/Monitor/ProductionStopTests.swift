import Foundation
import StallMonitor
import StallReportKit
import Synchronization
import Testing

/// Regressions found by the stress run (Scripts/stress): a stall right before stop(), and
/// several monitors of one process sharing a report directory.
@Suite("Production: stop() right after a stall; monitors sharing a directory", .serialized)
struct ProductionStopTests {
    @Test("stop() right after a stall ended (within the sampling interval) still writes it as ended, not inProgress")
    func stallJustBeforeStop() throws {
        try withMonitoredLoop(
            "stop-after",
            configure: { configuration in
                // the watchdog is unlikely to notice the end before stop()
                configuration.samplingInterval = .milliseconds(50)
            }
        ) { directory, loop, monitor in
            let measured = try loop.run {
                measureMilliseconds { StallingWork.spinOnCPUForStallTest(milliseconds: 300) }
            }
            monitor.stop()

            let reports = try directory.reports()
            try #require(reports.count == 1, "\(directory.entries())")
            #expect(
                reports[0].status == .ended,
                "a cleanly stopped monitor must not leave an inProgress report (the next start would call it fatal)")
            #expect(
                durationCovers(reports[0].durationMs, measured: measured),
                "report \(reports[0].durationMs) ms, measured \(measured) ms")
            #expect(monitor.statistics.stallsDetected == 1)
            #expect(try SessionRecordFile(monitor.sessionRecordURL).stalls == 1)
        }
    }

    @Test(
        "four monitors of one process started at once on four threads, one directory: distinct session records and report names, no errors"
    )
    func monitorsShareADirectory() throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        let loops = try (0..<4).map { try MonitoredLoopThread(name: "shared-\($0)") }
        defer { loops.forEach { $0.stop() } }
        var configuration = directory.configuration(threshold: .milliseconds(50))
        configuration.samplingInterval = .milliseconds(5)
        let config = configuration
        // Start all four at the same moment (each on its own loop thread).
        let starts = loops.map { loop in
            loop.perform { () -> Result<StallMonitor, StallMonitorError> in
                Result { () throws(StallMonitorError) in try StallMonitor.start(config, loop: .current) }
            }
        }
        let monitors = try starts.map { try $0.wait().get() }
        defer { monitors.forEach { $0.stop() } }
        try loops.forEach { try $0.waitUntilSleeping() }

        for _ in 0..<5 {  // simultaneous stalls on all four loops
            let stalls = loops.map { loop in loop.perform { StallingWork.spinOnCPUForStallTest(milliseconds: 80) } }
            try stalls.forEach { try $0.wait() }
            try loops.forEach { try $0.waitUntilSleeping() }
        }
        for monitor in monitors { #expect(monitor.waitForStalls(5), "\(monitor.statistics)") }
        monitors.forEach { $0.stop() }

        let sessions = directory.entries().filter { $0.hasSuffix(".session") }
        #expect(Set(monitors.map(\.sessionRecordURL.lastPathComponent)).count == 4)
        #expect(sessions.count == 4, "\(sessions)")
        #expect(directory.reportFiles().count == 20, "\(directory.entries())")
        for monitor in monitors {
            #expect(monitor.statistics.errors.isEmpty, "\(monitor.statistics.errors)")
            #expect(monitor.statistics.reportsWritten == 5)
        }
    }
}
