import Foundation
import StallMonitor
import StallReportKit
import Testing

@Suite("Work below the threshold", .serialized)
struct ShortWorkTests {
    @Test("60 ms of work is not tracked; 190 ms is tracked from the lead and discarded; neither is reported")
    func shortWorkIsNotReported() throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        let loop = try MonitoredLoopThread(name: "short-work")
        defer { loop.stop() }
        let monitor = try loop.startMonitor(directory.configuration())  // 250 ms, lead at 125 ms
        defer { monitor.stop() }

        let spansBefore = monitor.statistics.spans  // the span of the start callout ended
        let short = try loop.run { measureMilliseconds { StallingWork.spinOnCPUForStallTest(milliseconds: 60) } }
        #expect(short < 125)  // 65 ms below the lead: room for a preempted thread
        usleep(300_000)
        var statistics = monitor.statistics
        #expect(statistics.spans > spansBefore)
        #expect(statistics.spansTracked == 0)
        #expect(statistics.shortSpansDiscarded == 0)
        #expect(statistics.stallsDetected == 0)

        let longer = try loop.run { measureMilliseconds { StallingWork.spinOnCPUForStallTest(milliseconds: 190) } }
        #expect(longer < 250)  // 65 ms above the lead, 60 ms below the threshold
        #expect(waitUntil { monitor.statistics.shortSpansDiscarded == 1 })
        usleep(300_000)
        monitor.flush()
        statistics = monitor.statistics
        #expect(statistics.spansTracked == 1)
        #expect(statistics.shortSpansDiscarded == 1)
        #expect(statistics.stallsDetected == 0)
        #expect(statistics.reportsWritten == 0)
        #expect(statistics.samplesTaken > 0)  // sampling began at the lead, then was thrown away
        #expect(directory.reportFiles().isEmpty)
    }
}
