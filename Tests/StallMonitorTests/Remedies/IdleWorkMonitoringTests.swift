import Foundation
import StallMonitor
import StallReportKit
import Testing

/// Idle work with a named frame, to find in a report's samples.
enum IdleWorkSpin {
    @inline(never)
    static func spinPastThresholdInIdleWork(milliseconds: Int) {
        StallingWork.spinOnCPUForStallTest(milliseconds: milliseconds)
    }
}

@Suite("Idle-time work seen by the monitor", .serialized)
struct IdleWorkMonitoringTests {
    /// An idle-work queue of `loop`'s run loop, made on the loop's thread.
    private static func idleQueue(on loop: MonitoredLoopThread) throws -> IdleWorkQueue {
        try loop.run { Result { () throws(StallMonitorError) in try IdleWorkQueue(loop: .current) } }.get()
    }

    @Test("600 ms of CPU work drained through the idle queue is no stall; the same work in one callout is one")
    func drainingIsNotAStall() throws {
        try withMonitoredLoop("idle-monitored", configure: { $0.threshold = .milliseconds(300) }) {
            directory, loop, monitor in
            let queue = try Self.idleQueue(on: loop)
            let spansBefore = monitor.statistics.spans

            // Spinning, not sleeping: the thread never gives up the CPU, so only the queue's word
            // that the loop would have slept separates one pass's span from the next.
            for _ in 1...60 { queue.submit { StallingWork.spinOnCPUForStallTest(milliseconds: 10) } }
            #expect(waitUntil(timeout: .seconds(30)) { queue.statistics.completed == 60 })
            try loop.waitUntilSleeping()
            monitor.flush()
            var statistics = monitor.statistics
            #expect(statistics.stallsDetected == 0, "\(statistics)")
            #expect(statistics.spans - spansBefore >= 50, "about one span per pass: \(statistics)")
            #expect(queue.statistics.passes == 60)

            // The control: the same work in one callout of the loop.
            try loop.run { for _ in 1...60 { StallingWork.spinOnCPUForStallTest(milliseconds: 10) } }
            #expect(monitor.waitForStalls(1))
            statistics = monitor.statistics
            #expect(statistics.stallsDetected == 1, "\(statistics)")
            #expect(directory.reportFiles().count == 1)
            _ = queue.close()
        }
    }

    @Test("an idle item longer than the threshold is a stall, reported with the item's stack")
    func longItemIsReported() throws {
        try withMonitoredLoop("idle-long-item", configure: { $0.threshold = .milliseconds(300) }) {
            directory, loop, monitor in
            let queue = try Self.idleQueue(on: loop)

            queue.submit { IdleWorkSpin.spinPastThresholdInIdleWork(milliseconds: 700) }
            #expect(monitor.waitForStalls(1))
            #expect(queue.statistics.itemsOverBudget == 1)
            let reports = try directory.reports()
            #expect(reports.count == 1)
            guard let report = reports.first else { return }
            #expect(report.durationMs >= 650, "\(report.durationMs)")
            #expect(report.anySampleNames("spinPastThresholdInIdleWork"), "\(report.representativeSymbols)")
            _ = queue.close()
        }
    }
}
