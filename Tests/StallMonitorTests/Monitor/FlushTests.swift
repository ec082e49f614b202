import Foundation
import StallMonitor
import Testing

@Suite("flush(timeout:)", .serialized)
struct FlushTests {
    @Test("flush with a zero or negative timeout returns at once instead of trapping")
    func nonPositiveTimeouts() throws {
        try withMonitoredLoop("flush") { directory, loop, monitor in
            // start queues the session's first heartbeat and the stale-report sweep on the writer:
            // until they are done a zero timeout rightly answers false (on a loaded machine it did).
            #expect(monitor.flush())
            #expect(monitor.flush(timeout: .zero))
            #expect(monitor.flush(timeout: .milliseconds(-5)))
            #expect(monitor.flush(timeout: .seconds(-2)))

            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 300) }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            #expect(monitor.flush(timeout: .milliseconds(-1)))
            #expect(directory.reportFiles().count == 1)
        }
    }
}
