import CStallMonitor
import CoreFoundation
import Foundation
import StallMonitor
import StallReportKit
import Testing

@Suite("Nested runs of the monitored loop", .serialized)
struct NestedRunTests {
    @Test("an idle nested run inside a callout is no stall; a stall after it, still in the callout, is one")
    func nestedRunIsNotAStall() throws {
        try withMonitoredLoop("nested-run") { directory, loop, monitor in
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

            let report = try directory.onlyReport()
            #expect(report.durationMs >= stall - 1)
            // A span from before the nested run would be 400 ms longer; 150 ms of slack for a loaded machine.
            #expect(
                report.durationMs < stall + 150, "the span covers the stall after the nested run, not the nested run")
            let symbols = report.representativeSymbols
            #expect(symbols.contains { $0.contains("spinAfterNestedRunForStallTest") }, "\(symbols)")
            #expect(
                report.samples.allSatisfy { sample in
                    !report.symbols(of: sample).contains { $0.contains("spinOnCPUForStallTest") }
                })
            #expect(monitor.statistics.stallsDetected == 1)
        }
    }

    @Test(
        "a report names the mode of the run that stalled: a nested run's mode, then the enclosing run's again, also once the mode is read without the loop's lock"
    )
    func reportsTheStalledRunsMode() throws {
        try withMonitoredLoop("nested-mode", configure: { $0.threshold = .milliseconds(200) }) {
            directory, loop, monitor in
            // A mode of our own, made common so the observers see runs in it.
            let tracking = "StallMonitorTestTracking"
            try loop.run {
                let mode = CFStringCreateWithCString(nil, tracking, CFStringBuiltInEncodings.UTF8.rawValue)!
                CFRunLoopAddCommonMode(CFRunLoopGetCurrent(), mode)
                let stallInNestedRun = CFRunLoopTimerCreateWithHandler(nil, CFAbsoluteTimeGetCurrent() + 0.01, 0, 0, 0)
                { _ in
                    StallingWork.spinOnCPUForStallTest(milliseconds: 400)
                }
                CFRunLoopAddTimer(CFRunLoopGetCurrent(), stallInNestedRun, mode)
                // Keeps the nested run waiting after the stall until its 0.6 s are up.
                let keepAlive = CFRunLoopTimerCreateWithHandler(nil, CFAbsoluteTimeGetCurrent() + 3_600, 0, 0, 0) { _ in
                }
                CFRunLoopAddTimer(CFRunLoopGetCurrent(), keepAlive, mode)
                // Runs in both modes first: the mode is then read without the loop's lock, and the
                // reports below must still name each run's own mode.
                for _ in 0..<12 {
                    _ = CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0, true)
                    _ = CFRunLoopRunInMode(mode, 0, true)
                }
                #expect(CStallMonitor_run_loop_mode_read_directly() == 1)
                _ = CFRunLoopRunInMode(mode, 0.6, false)
                CFRunLoopTimerInvalidate(keepAlive)
                // Back in the default-mode callout: this stall belongs to the enclosing run.
                StallingWork.spinAfterNestedRunForStallTest(milliseconds: 400)
            }
            #expect(monitor.waitForStalls(2), "\(monitor.statistics)")
            let reports = try directory.reports().sorted { $0.startedAt < $1.startedAt }
            try #require(
                reports.count == 2,
                "\(reports.map { ($0.loop.mode ?? "-", $0.durationMs, $0.representativeSymbols.prefix(3)) })")
            #expect(reports[0].loop.mode == tracking)
            #expect(reports[1].loop.mode == "kCFRunLoopDefaultMode")
        }
    }
}
