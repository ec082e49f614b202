import Foundation
import StallMonitor
import StallReportKit
import Synchronization
import Testing

/// The report directory stays within its quota: the oldest reports go first, and what was
/// deleted is counted in the statistics and in the session record.
@Suite("Production: report directory quota", .serialized)
struct ProductionQuotaTests {
    @Test("with maxReportFiles 3, five stalls leave the newest 3 files; 2 deletions counted, also in the session record")
    func oldestReportsGoFirst() throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        let loop = try MonitoredLoopThread(name: "quota")
        defer { loop.stop() }
        let written = Mutex<[String]>([])
        var configuration = directory.configuration()
        configuration.maxReportFiles = 3
        configuration.onReport = { _, url in written.withLock { $0.append(url.lastPathComponent) } }
        let monitor = try loop.startMonitor(configuration)

        for count in 1...5 {
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 300) }
            #expect(monitor.waitForStalls(count), "\(monitor.statistics)")
        }
        monitor.stop()

        let names = written.withLock { $0 }
        try #require(names.count == 5, "\(names)")
        #expect(names == names.sorted(), "report names sort by time")
        #expect(directory.reportFiles().map(\.lastPathComponent) == Array(names.suffix(3)))
        let statistics = monitor.statistics
        #expect(statistics.stallsDetected == 5)
        #expect(statistics.reportsWritten == 5)
        #expect(statistics.reportsDeletedForQuota == 2)
        #expect(statistics.errors.isEmpty)

        let session = try SessionRecordFile(monitor.sessionRecordURL)
        #expect(session.reportsDropped["deletedForQuota"] == 2, "\(session.json)")
        #expect(session.stalls == 5)
        #expect(directory.entries().filter { $0.hasSuffix(".session") } == [monitor.sessionRecordURL.lastPathComponent])
    }

    @Test("maxReportBytes keeps the directory under its byte budget, deleting oldest first")
    func byteBudget() throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        let loop = try MonitoredLoopThread(name: "quota-bytes")
        defer { loop.stop() }
        var configuration = directory.configuration()
        configuration.maxReportBytes = 4096  // smaller than one full report: only the newest stays
        let monitor = try loop.startMonitor(configuration)
        defer { monitor.stop() }

        for count in 1...3 {
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 300) }
            #expect(monitor.waitForStalls(count), "\(monitor.statistics)")
        }
        #expect(directory.reportFiles().count == 1)
        #expect(monitor.statistics.reportsDeletedForQuota == 2)
    }
}
