import Foundation
import Glibc
import StallMonitor
import StallReportKit
import Testing

@Suite("Report files on disk", .serialized)
struct ReportFileTests {
    private static func permissions(_ path: String) -> mode_t? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return info.st_mode & 0o777
    }

    @Test("a missing directory is created 0700; reports are 0600, sort by time and leave no temporary files")
    func filesAreWrittenSafely() throws {
        let root = ReportDirectory()
        defer { root.remove() }
        let directory = root.url.appendingPathComponent("nested/reports", isDirectory: true)
        let loop = try MonitoredLoopThread(name: "report-files")
        defer { loop.stop() }
        let monitor = try loop.startMonitor(.init(threshold: .milliseconds(250), reportDirectory: directory))
        defer { monitor.stop() }
        #expect(Self.permissions(directory.path) == 0o700)
        #expect(Self.permissions(directory.deletingLastPathComponent().path) == 0o700)

        for count in 1...3 {
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 280) }
            #expect(monitor.waitForStalls(count))
        }

        monitor.stop()  // the session record is final, nothing is being written
        let all = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(!all.contains { $0.hasSuffix(".tmp") || $0.hasPrefix(".") }, "\(all)")
        let sessions = all.filter { $0.hasPrefix("session-") && $0.hasSuffix(".session") }
        #expect(sessions.count == 1, "\(all)")
        for name in sessions {
            #expect(Self.permissions(directory.appendingPathComponent(name).path) == 0o600, "\(name)")
        }
        let entries = all.filter { !sessions.contains($0) }
        #expect(entries.count == 3, "\(all)")
        for name in entries {
            #expect(name.hasPrefix("stall-") && name.hasSuffix(".json"))
            #expect(name.contains("-p\(getpid())-"))
            #expect(Self.permissions(directory.appendingPathComponent(name).path) == 0o600, "\(name)")
        }
        let reports = try entries.map { try StallReport.read(from: directory.appendingPathComponent($0)) }
        let starts = reports.map(\.startedAt)
        #expect(starts == starts.sorted(), "names sort in the order the stalls started")
        #expect(Set(reports.map(\.id)).count == 3)
    }

    @Test("a report directory under a regular file is refused at start")
    func directoryUnderFileIsRefused() throws {
        try withCreatedDirectory { root in
            let file = root.url.appendingPathComponent("plain-file")
            try Data("not a directory".utf8).write(to: file)
            for target in [file, file.appendingPathComponent("reports")] {
                #expect {
                    _ = try StallMonitor.start(.init(reportDirectory: target), loop: .current)
                } throws: { error in
                    guard let error = error as? StallMonitorError, error.code == .reportDirectory else { return false }
                    return error.path == target.path
                }
            }
        }
    }

    @Test("when the directory is replaced by a file after start, write errors are counted and the loop goes on")
    func unwritableDirectoryNeverBlocksTheLoop() throws {
        try withMonitoredLoop("unwritable") { directory, loop, monitor in
            try FileManager.default.removeItem(at: directory.url)
            try Data("in the way".utf8).write(to: directory.url)

            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 300) }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            var statistics = monitor.statistics
            #expect(statistics.stallsDetected == 1)
            #expect(statistics.reportsWritten == 0)
            // Every file the stall needed (its inProgress and final report, the session record) failed.
            let firstErrors = statistics.errors["reportWrite"] ?? 0
            #expect(firstErrors >= 1)
            guard let lastError = statistics.lastError, lastError.code == .reportWrite, let path = lastError.path else {
                Issue.record("lastError is \(String(describing: statistics.lastError))")
                return
            }
            #expect(path.hasPrefix(directory.url.path))

            // The loop still answers at once, and a second failure is counted too.
            #expect(try loop.run(timeout: .seconds(2)) { true })
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 300) }
            #expect(monitor.waitForStalls(2), "\(monitor.statistics)")
            statistics = monitor.statistics
            #expect(statistics.stallsDetected == 2)
            #expect((statistics.errors["reportWrite"] ?? 0) > firstErrors)
            #expect(statistics.reportsWritten == 0)
            #expect(try String(contentsOf: directory.url, encoding: .utf8) == "in the way")
        }
    }
}
