import Foundation
import StallMonitor
import StallReportKit
import Testing

/// Nothing of one monitor's state outlives it: a second monitor of the same loop, in the same
/// process, after the first stopped, writes the same files for the same stall (issue 41).
@Suite("A second monitor in the same process", .serialized)
struct SecondMonitorTests {
    /// What one monitor wrote: its files' names with the time, pid and numbers masked, its
    /// report, and its session record.
    struct Written {
        var names: [String]
        var report: StallReport
        var session: SessionRecordFile
    }

    /// Monitors `loop` into `directory` during one 600 ms stall, stops, and reads what it wrote.
    static func monitorOneStall(_ loop: MonitoredLoopThread, into directory: ReportDirectory) throws -> Written {
        let monitor = try loop.startMonitor(directory.configuration())
        try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 600) }
        #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
        monitor.stop()
        let names = directory.entries().map { name in
            String(name.map { $0.isNumber ? "#" : $0 })
        }.sorted()
        let reports = try directory.reports()
        try #require(reports.count == 1, "\(directory.entries())")
        let session = try #require(directory.entries().first { $0.hasPrefix("session-") })
        return Written(
            names: names, report: reports[0],
            session: try SessionRecordFile(directory.url.appendingPathComponent(session)))
    }

    @Test("start, stall, stop, then again: the second monitor's files are the first's (kinds, report, session record)")
    func secondMonitorWritesTheSameFiles() throws {
        try withReportDirectories("first-monitor", "second-monitor") { first, second in
            let loop = try MonitoredLoopThread(name: "second-monitor")
            defer { loop.stop() }

            let one = try Self.monitorOneStall(loop, into: first)
            let two = try Self.monitorOneStall(loop, into: second)

            // One stall report and one session record each. A session record's name carries a number
            // from the second monitor of a process on (names in a shared directory never collide):
            // masked digits keep its shape.
            #expect(one.names.count == 2 && two.names.count == 2, "\(one.names) \(two.names)")
            #expect(one.names.first { $0.hasPrefix("stall-") } == two.names.first { $0.hasPrefix("stall-") })
            for written in [one, two] {
                #expect(written.report.status == .ended)
                #expect(written.report.loop.threadID == Int(loop.tid))
                #expect(written.report.representativeSymbols.contains { $0.contains("spinOnCPUForStallTest") })
                #expect(written.session.cleanStop == true)
                #expect(written.session.stalls == 1)
                #expect(written.session.reportsWritten == 1)
                #expect(written.session.reportsDropped.isEmpty)
            }
            // The same facts (the stack's exact leaf, and so the fingerprint and the CPU split, may
            // differ between two spins on a loaded machine: not compared).
            #expect(one.report.loop.kind == two.report.loop.kind)
            #expect(one.report.loop.threadName == two.report.loop.threadName)
            #expect(one.report.thresholdMs == two.report.thresholdMs)
            #expect(one.report.sampling.unwinder == two.report.sampling.unwinder)
            #expect(one.report.sampling.intervalMs == two.report.sampling.intervalMs)
            #expect(one.report.process.pid == two.report.process.pid)
            #expect(Set((one.report.tags ?? [:]).keys) == Set((two.report.tags ?? [:]).keys))
        }
    }
}
