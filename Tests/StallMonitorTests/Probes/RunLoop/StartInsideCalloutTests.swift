import CoreFoundation
import Foundation
import StallMonitor
import StallReportKit
import Testing

@Suite("Starting from inside a callout of the monitored loop", .serialized)
struct StartInsideCalloutTests {
    @Test("a stall in the very callout that started the monitor is detected")
    func stallInStartingCallout() throws {
        try withLoopThread("start-callout") { directory, loop in
            let configuration = directory.configuration()

            let started = try loop.run { () -> Result<StallMonitor, StallMonitorError> in
                let result = Result { () throws(StallMonitorError) in
                    try StallMonitor.start(configuration, loop: .current)
                }
                if case .success = result { StallingWork.spinOnCPUForStallTest(milliseconds: 350) }
                return result
            }
            let monitor = try started.get()
            defer { monitor.stop() }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")

            let report = try #require(try directory.reports().first)
            // The span began when the starting callout began: at least the spin, and not much more
            // (the loop thread was created just before; the slack is for a loaded machine).
            #expect(report.durationMs >= 350)
            #expect(report.durationMs < 350 + 250)
            #expect(report.representativeSymbols.contains { $0.contains("spinOnCPUForStallTest") })
        }
    }

    @Test("a stall in the pass right after the starting callout, with no wait between, is detected")
    func stallInNextPassWithoutWaiting() throws {
        try withLoopThread("next-pass") { directory, loop in
            let configuration = directory.configuration()

            let started = try loop.run { () -> Result<StallMonitor, StallMonitorError> in
                // The next block is queued (and the loop woken) before this callout ends: the loop
                // runs it without sleeping in between, or after a wait that returns at once.
                RunLoop.current.perform { StallingWork.spinOnCPUForStallTest(milliseconds: 350) }
                CFRunLoopWakeUp(CFRunLoopGetCurrent())
                return Result { () throws(StallMonitorError) in try StallMonitor.start(configuration, loop: .current) }
            }
            let monitor = try started.get()
            defer { monitor.stop() }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            let report = try #require(try directory.reports().first)
            #expect(report.durationMs >= 350)
            #expect(report.representativeSymbols.contains { $0.contains("spinOnCPUForStallTest") })
        }
    }
}
