import Foundation
import StallMonitor
import StallReportKit
import Testing

@Suite("An idle loop", .serialized)
struct IdleLoopTests {
    @Test("a loop idle for 1 s gives no report and no watchdog wake-ups")
    func idleLoopWakesNothing() throws {
        try withMonitoredLoop("idle-loop") { directory, loop, monitor in
            // One short span, so the watchdog has had something to do, then past any pending deadline.
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 5) }
            usleep(400_000)
            let before = monitor.statistics
            usleep(1_000_000)
            let after = monitor.statistics

            #expect(after.watchdogWakeups == before.watchdogWakeups)
            #expect(after.spans == before.spans)
            #expect(after.stallsDetected == 0)
            #expect(directory.reportFiles().isEmpty)
        }
    }
}
