import Foundation
import StallReportKitTestSupport
import Testing

@testable import StallReportKit

/// The one liveness rule: pid and start time, the executable's name only when no start time was recorded.
@Suite("Process liveness")
struct ProcessLivenessTests {
    @Test("/proc/<pid>/stat is parsed after the last ')' of the command name")
    func parsesStat() throws {
        let text =
            "4242 (odd) (name ) S 1 4242 4242 0 -1 4194304 100 0 0 0 5 2 0 0 20 0 3 0 987654 1000 200 18446744073709551615\n"
        let stat = try #require(ProcessLiveness.parseStat(text))
        #expect(stat.state == "S")
        #expect(stat.startTicks == 987_654)
        #expect(ProcessLiveness.parseStat("4242 (short) S 1 2") == nil)
        #expect(ProcessLiveness.parseStat("no parenthesis") == nil)
        let own = try #require(ProcessLiveness.stat(pid: Int(getpid())))
        #expect(own.state == "R" || own.state == "S")
    }

    @Test(
        "an inProgress report is live only while a process with its pid and start time runs; a reused pid makes it fatal"
    )
    func inProgressReportStatus() throws {
        let pid = Int(getpid())
        let ticks = try #require(ProcessLiveness.startTicks(pid: pid))
        var report = ReportFixtures.report(appSymbols: ["App.spin()"], durationMs: 300, status: .inProgress)
        report.process.pid = pid
        report.process.hostName = StaleStatus.hostName
        report.process.executableName = "not-this-executable"
        report.process.startTicks = ticks
        #expect(StaleStatus.effectiveStatus(of: report) == .inProgress, "the start time decides, not the name")
        report.process.startTicks = ticks + 1
        #expect(StaleStatus.effectiveStatus(of: report) == .fatal, "same pid, another process")
        // A report of an older monitor (no start time): the executable's name decides.
        report.process.startTicks = nil
        #expect(StaleStatus.effectiveStatus(of: report) == .fatal)
        report.process.executableName = ProcessInfo.processInfo.processName
        #expect(StaleStatus.effectiveStatus(of: report) == .inProgress)
        // Another host's report is never judged here.
        report.process.hostName = "another-host"
        report.process.startTicks = ticks + 1
        #expect(StaleStatus.effectiveStatus(of: report) == .inProgress)
    }
}
