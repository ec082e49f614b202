import Foundation
import StallMonitor
import StallReportKit
import Testing

@Suite("Work below the threshold", .serialized)
struct ShortWorkTests {
    @Test("60 ms of work is not tracked; 1.5 s is tracked from the lead and discarded; neither is reported")
    func shortWorkIsNotReported() throws {
        // Threshold 2 s, lead at 1 s: 500 ms on either side of 1.5 s of work leaves room for a
        // preempted thread and for samples on a loaded 2-core machine under a sanitizer, where
        // the first unwinding alone (libdw reading the test binary's CFI) took 86 ms and the
        // watchdog got the CPU five times in 250 ms.
        try withMonitoredLoop("short-work", configure: { $0.threshold = .seconds(2) }) { directory, loop, monitor in
            let spansBefore = monitor.statistics.spans  // the span of the start callout ended
            let short = try loop.run { measureMilliseconds { StallingWork.spinOnCPUForStallTest(milliseconds: 60) } }
            #expect(short < 1_000)
            usleep(300_000)
            var statistics = monitor.statistics
            #expect(statistics.spans > spansBefore)
            #expect(statistics.spansTracked == 0)
            #expect(statistics.shortSpansDiscarded == 0)
            #expect(statistics.stallsDetected == 0)

            let longer = try loop.run {
                measureMilliseconds { StallingWork.spinOnCPUForStallTest(milliseconds: 1_500) }
            }
            #expect(longer < 2_000)
            #expect(waitUntil { monitor.statistics.shortSpansDiscarded == 1 })
            usleep(300_000)
            monitor.flush()
            statistics = monitor.statistics
            #expect(statistics.spansTracked == 1)
            #expect(statistics.shortSpansDiscarded == 1)
            #expect(statistics.stallsDetected == 0)
            #expect(statistics.reportsWritten == 0)
            // Sampling began at the lead (stacks were taken), then the samples were thrown away.
            #expect(statistics.watchdogStacks > 0, "\(statistics)")
            #expect(directory.reportFiles().isEmpty)
        }
    }
}
