import Foundation
import Glibc
import StallMonitor
import StallReportKit
import Testing

/// Session records are within the directory's quota too: many short-lived monitors (or
/// processes) do not fill the directory with them, and the records still being written stay.
@Suite("Storage: the quota covers session records", .serialized)
struct SessionQuotaTests {
    /// A pid that no process has now: a child that ran `/bin/true` and was reaped.
    private static func deadPID() throws -> pid_t {
        var child: pid_t = 0
        let arguments: [UnsafeMutablePointer<CChar>?] = [strdup("true"), nil]
        defer { arguments.forEach { free($0) } }
        try #require(posix_spawn(&child, "/bin/true", nil, nil, arguments, environ) == 0)
        try #require(waitForChild(child) != nil)
        return child
    }

    @Test(
        "with maxReportFiles 4, eight start/stop cycles keep 4 session records: a dead process's and a live one's older records go, its newest stays, and ours newest first"
    )
    func sessionRecordsStayWithinTheFileQuota() throws {
        try withCreatedDirectory { directory in
            let dead = try Self.deadPID()
            let live = getppid()  // runs as long as this test does
            let deadRecords = [
                "session-20200101T000000.000Z-p\(dead).session", "session-20200101T000001.000Z-p\(dead).session",
            ]
            let liveOlder = "session-20200101T000002.000Z-p\(live).session"
            let liveNewest = "session-20200101T000003.000Z-p\(live).session"
            for name in deadRecords + [liveOlder, liveNewest] {
                try Data("{}".utf8).write(to: directory.url.appendingPathComponent(name))
            }

            let loop = try MonitoredLoopThread(name: "session-quota")
            defer { loop.stop() }
            var configuration = directory.configuration()
            configuration.maxReportFiles = 4
            var ours: [String] = []
            for _ in 1...8 {
                let monitor = try loop.startMonitor(configuration)
                #expect(monitor.flush())  // the record of the start is written and the quota enforced
                ours.append(monitor.sessionRecordURL.lastPathComponent)
                monitor.stop()
                #expect(monitor.statistics.errors.isEmpty, "\(monitor.statistics.errors)")
            }

            let sessions = directory.entries().filter { $0.hasSuffix(".session") }
            #expect(sessions.count == 4, "\(sessions)")
            #expect(!sessions.contains { deadRecords.contains($0) }, "\(sessions)")
            #expect(!sessions.contains(liveOlder), "\(sessions)")
            #expect(sessions.contains(liveNewest), "the newest record of a live process was deleted: \(sessions)")
            #expect(Set(sessions) == Set([liveNewest] + ours.suffix(3)), "\(sessions) vs ours \(ours)")
        }
    }
}
