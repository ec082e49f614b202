import Foundation
import StallMonitor
import StallReportKit
import Testing

/// The per-process session record next to the reports.
@Suite("Production: session record", .serialized)
struct ProductionSessionTests {
    @Test(
        "the session record exists while running (not a clean stop); after stop() it has cleanStop and the counts, mode 0600"
    )
    func sessionRecordAfterStop() throws {
        try withMonitoredLoop("session") { directory, loop, monitor in
            let url = monitor.sessionRecordURL
            #expect(url.deletingLastPathComponent().standardizedFileURL == directory.url.standardizedFileURL)
            #expect(url.lastPathComponent.hasPrefix("session-") && url.lastPathComponent.hasSuffix(".session"))
            #expect(waitUntil { FileManager.default.fileExists(atPath: url.path) }, "no session record while running")
            #expect(try SessionRecordFile(url).cleanStop == false)

            for count in 1...2 {
                try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 300) }
                #expect(monitor.waitForStalls(count), "\(monitor.statistics)")
            }
            for _ in 0..<5 {  // short spans, each after the loop slept
                _ = try loop.run { 1 }
                try loop.waitUntilSleeping()
            }
            monitor.stop()

            let statistics = monitor.statistics
            let record = try SessionRecordFile(url)
            #expect(record.cleanStop == true)
            #expect(record.pid == Int(getpid()))
            #expect(record.stalls == statistics.stallsDetected)
            #expect(record.stalls == 2)
            #expect(record.spans == statistics.spans)
            #expect((record.spans ?? 0) >= 7, "\(record.json)")
            #expect(record.reportsWritten == statistics.reportsWritten)
            #expect(record.reportsDropped.isEmpty, "\(record.json)")
            #expect(permissionBits(url) == 0o600)
            #expect(directory.reportFiles().count == 2)
        }
    }
}
