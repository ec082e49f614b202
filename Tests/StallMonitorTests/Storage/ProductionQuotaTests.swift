import Foundation
import StallMonitor
import StallReportKit
import Synchronization
import Testing

/// The report directory stays within its quota: the oldest reports go first, and what was
/// deleted is counted in the statistics and in the session record.
@Suite("Production: report directory quota", .serialized)
struct ProductionQuotaTests {
    @Test(
        "with maxReportFiles 3, five stalls leave the newest 3 files; 2 deletions counted, also in the session record")
    func oldestReportsGoFirst() throws {
        let written = Mutex<[String]>([])
        try withMonitoredLoop(
            "quota",
            configure: { configuration in
                configuration.maxReportFiles = 3
                configuration.onReport = { _, url in written.withLock { $0.append(url.lastPathComponent) } }
            }
        ) { directory, loop, monitor in
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
            #expect(
                directory.entries().filter { $0.hasSuffix(".session") } == [monitor.sessionRecordURL.lastPathComponent])
        }
    }

    @Test(
        "an old report that cannot be deleted is reported once as a reportQuota error, passed over, and the newer ones still go",
        .enabled(if: ScratchMount.available, "needs root and mount(8)"))
    func undeletableReportIsCounted() throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        // The oldest report, of a process that has exited, is a mount point: unlink fails (EBUSY).
        let exited = Process()
        exited.executableURL = URL(fileURLWithPath: "/bin/true")
        try exited.run()
        exited.waitUntilExit()
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let stuck = directory.url.appendingPathComponent(
            "stall-20200101T000000.000Z-p\(exited.processIdentifier)-0001.json")
        let source = FileManager.default.temporaryDirectory.appendingPathComponent("quota-bind-\(UUID().uuidString)")
        try Data("{}".utf8).write(to: stuck)
        try Data("{}".utf8).write(to: source)
        let mount = try ScratchMount.bindFile(source, onto: stuck)
        defer {
            mount.unmount()
            try? FileManager.default.removeItem(at: source)
        }

        let loop = try MonitoredLoopThread(name: "quota-stuck")
        defer { loop.stop() }
        var configuration = directory.configuration()
        configuration.maxReportFiles = 2
        let monitor = try loop.startMonitor(configuration)
        for count in 1...3 {
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 300) }
            #expect(monitor.waitForStalls(count), "\(monitor.statistics)")
        }
        monitor.stop()

        let statistics = monitor.statistics
        #expect(statistics.errors["reportQuota"] == 1, "tried once, not after every report: \(statistics.errors)")
        if let lastError = statistics.lastError, lastError.code == .reportQuota {
            #expect(lastError.path == stuck.path && lastError.reason.contains("cannot delete"), "\(lastError.reason)")
        } else {
            Issue.record("last error: \(String(describing: statistics.lastError))")
        }
        // The stuck file and the newest report are within the quota of 2: the older two went.
        #expect(directory.reportFiles().count == 2, "\(directory.entries())")
        #expect(statistics.reportsDeletedForQuota == 2)
    }

    @Test("monitors of one process sharing a directory: one's quota never deletes another's inProgress report")
    func quotaSparesAnotherMonitorsStallInProgress() throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        let holder = try MonitoredLoopThread(name: "quota-holder")
        defer { holder.stop() }
        let writer = try MonitoredLoopThread(name: "quota-writer")
        defer { writer.stop() }
        var configuration = directory.configuration()
        configuration.maxReportFiles = 1
        let holding = try holder.startMonitor(configuration)
        defer { holding.stop() }
        let writing = try writer.startMonitor(configuration)
        defer { writing.stop() }

        let long = holder.perform { StallingWork.spinOnCPUForStallTest(milliseconds: 3_000) }
        var held: String?
        #expect(
            waitUntil(timeout: .seconds(10)) {
                held =
                    directory.reportFiles().first { (try? StallReport.read(from: $0))?.status == .inProgress }?
                    .lastPathComponent
                return held != nil
            }, "the holder's inProgress report did not appear")
        for count in 1...2 {
            try writer.run { StallingWork.spinOnCPUForStallTest(milliseconds: 300) }
            #expect(writing.waitForStalls(count), "\(writing.statistics)")
        }
        // The holder rewrites its report every second, so a deleted one would come back: the
        // deletions tell. Only the writer's first report may go (when its second is written).
        #expect(writing.statistics.reportsDeletedForQuota == 1, "\(writing.statistics)")
        if let held { #expect(directory.entries().contains(held)) }
        _ = try long.wait(timeout: .seconds(20))
        #expect(holding.waitForStalls(1), "\(holding.statistics)")
        #expect(holding.statistics.errors.isEmpty && writing.statistics.errors.isEmpty)
    }

    @Test("maxReportBytes keeps the directory under its byte budget, deleting oldest first")
    func byteBudget() throws {
        try withMonitoredLoop(
            "quota-bytes",
            configure: { configuration in
                configuration.maxReportBytes = 4096  // smaller than one full report: only the newest stays
            }
        ) { directory, loop, monitor in
            for count in 1...3 {
                try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 300) }
                #expect(monitor.waitForStalls(count), "\(monitor.statistics)")
            }
            #expect(directory.reportFiles().count == 1)
            #expect(monitor.statistics.reportsDeletedForQuota == 2)
        }
    }
}
