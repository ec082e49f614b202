import Foundation
import StallMonitor
import StallReportKit
import Testing

@Suite("A CPU-bound stall", .serialized)
struct CPUStallTests {
    @Test("400 ms of spinning gives one cpu report with the span's duration and the spinning function")
    func cpuStallIsReportedOnce() throws {
        try withMonitoredLoop("cpu-stall") { directory, loop, monitor in
            let measured = try loop.run {
                measureMilliseconds { StallingWork.spinOnCPUForStallTest(milliseconds: 400) }
            }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            usleep(300_000)  // a second, bogus report would have time to appear
            monitor.flush()

            let report = try directory.onlyReport()
            #expect(
                durationCovers(report.durationMs, measured: measured),
                "report says \(report.durationMs) ms, the test measured \(measured) ms")
            #expect(report.status == .ended)
            #expect(report.thresholdMs == 250)
            #expect(
                report.classification == .cpu, "CPU \(report.mainThreadCPUMs) ms of \(report.cpuObservedMs) ms observed"
            )
            #expect(
                report.representativeSymbols.contains { $0.contains("spinOnCPUForStallTest") },
                "\(report.representativeSymbols)")
            #expect(report.loop.threadID == Int(loop.tid))
            #expect(report.loop.threadName == loop.name)
            #expect(report.loop.isMainThread == false)
            #expect(report.loop.mode == "kCFRunLoopDefaultMode")
            #expect(report.process.pid == Int(getpid()))
            #expect(report.sampling.unwinder == "libdw")
            #expect(
                report.samples.filter { $0.kind == .stack }.allSatisfy {
                    $0.unwinder == "libdw" && $0.interrupted == true
                })
            #expect(report.sampling.taken > 0)
            #expect(report.samples.allSatisfy { $0.offsetMs <= report.durationMs + 1 })

            let statistics = monitor.statistics
            #expect(statistics.stallsDetected == 1)
            #expect(statistics.reportsWritten == 1)
            #expect(statistics.errors.isEmpty)
        }
    }
}
