import Foundation
import StallMonitor
import StallReportKit
import Testing

@Suite("Nested runs of the monitored loop", .serialized)
struct NestedRunTests {
    @Test("an idle nested run inside a callout is no stall; a stall after it, still in the callout, is one")
    func nestedRunIsNotAStall() throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        let loop = try MonitoredLoopThread(name: "nested-run")
        defer { loop.stop() }
        let monitor = try loop.startMonitor(directory.configuration())
        defer { monitor.stop() }

        // 300 ms nested run (idle: the loop sleeps inside it), then back in the outer callout.
        let nested = try loop.run { () -> Double in
            measureMilliseconds { _ = RunLoop.current.run(mode: .default, before: Date() + 0.3) }
        }
        #expect(nested >= 290)
        usleep(300_000)
        #expect(monitor.statistics.stallsDetected == 0)
        #expect(directory.reportFiles().isEmpty)

        // Work before and after the nested run: only the part after it is one awake stretch.
        let stall = try loop.run { () -> Double in
            StallingWork.spinOnCPUForStallTest(milliseconds: 100)
            RunLoop.current.run(until: Date() + 0.3)
            return measureMilliseconds { StallingWork.spinAfterNestedRunForStallTest(milliseconds: 400) }
        }
        #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
        usleep(300_000)
        monitor.flush()

        let reports = try directory.reports()
        try #require(reports.count == 1)
        let report = reports[0]
        #expect(report.durationMs >= stall - 1)
        // A span from before the nested run would be 400 ms longer; 150 ms of slack for a loaded machine.
        #expect(report.durationMs < stall + 150, "the span covers the stall after the nested run, not the nested run")
        let symbols = report.representativeSymbols
        #expect(symbols.contains { $0.contains("spinAfterNestedRunForStallTest") }, "\(symbols)")
        #expect(report.samples.allSatisfy { sample in
            !report.symbols(of: sample).contains { $0.contains("spinOnCPUForStallTest") }
        })
        #expect(monitor.statistics.stallsDetected == 1)
    }
}
