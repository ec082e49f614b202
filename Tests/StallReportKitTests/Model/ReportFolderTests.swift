import Foundation
import Glibc
import StallReportModel
import Testing

/// The report directory's owner: names written and parsed in one place, listing that ignores what
/// is not a regular file, removal outcomes, and the liveness rule with its host and pid cases.
@Suite("Report folder")
struct ReportFolderTests {
    /// A fresh directory under the temporary directory, removed by `body`'s caller.
    private static func scratch() throws -> ReportFolder {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ReportFolderTests-\(UUID().uuidString)")
        let folder = ReportFolder(url)
        try folder.prepare()
        return folder
    }

    @Test("report and session names are parsed back to the pid that wrote them, and told apart")
    func namesRoundTrip() {
        let stamp = ReportFileName.stamp(Date(timeIntervalSince1970: 1_700_000_000.123))
        #expect(stamp == "20231114T221320.123Z")
        let report = ReportFileName.report(stamp: stamp, pid: 4242, number: 7)
        #expect(report == "stall-20231114T221320.123Z-p4242-0007.json")
        #expect(ReportFileName.isReport(report) && !ReportFileName.isSession(report))
        #expect(ReportFileName.reportWriterPID(report) == 4242)
        #expect(
            ReportFileName.session(stamp: stamp, pid: 4242, number: 1) == "session-20231114T221320.123Z-p4242.session")
        let second = ReportFileName.session(stamp: stamp, pid: 4242, number: 2)
        #expect(second == "session-20231114T221320.123Z-p4242-2.session")
        #expect(ReportFileName.isSession(second) && !ReportFileName.isReport(second))
        #expect(ReportFileName.sessionWriterPID(second) == 4242)
        #expect(SessionRecord.isSessionFileName(second))
        #expect(ReportFileName.reportWriterPID("stall-odd.json") == nil)
    }

    @Test("listing keeps regular files only (no FIFO, no symbolic link); removal says what it did")
    func listingAndRemoval() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder.path) }
        try folder.write(Data("{}".utf8), name: "stall-a.json", replacing: false)
        #expect(mkfifo(folder.path(of: "stall-fifo.json"), 0o600) == 0)
        #expect(symlink(folder.path(of: "stall-a.json"), folder.path(of: "stall-link.json")) == 0)
        let files = try #require(folder.regularFiles(where: ReportFileName.isReport))
        #expect(files == ["stall-a.json": 2])
        #expect(folder.remove("stall-a.json") == .removed)
        #expect(folder.remove("stall-a.json") == .alreadyGone)
    }

    @Test("a taken name makes a new file take the next; replacing writes over this process's file")
    func writesNewAndReplaces() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder.path) }
        try folder.write(Data("1".utf8), name: "stall-a.json", replacing: false)
        let next = try folder.write(Data("2".utf8), name: "stall-a.json", replacing: false) { "stall-b.json" }
        #expect(next.name == "stall-b.json")
        #expect(throws: ReportFolder.WriteFailure.self) {
            try folder.write(Data("3".utf8), name: "stall-a.json", replacing: false)
        }
        try folder.write(Data("4".utf8), name: "stall-a.json", replacing: true)
        #expect((try? String(contentsOfFile: folder.path(of: "stall-a.json"), encoding: .utf8)) == "4")
    }

    @Test("liveness: another host is unknown, this process runs, a reused pid is gone")
    func liveness() throws {
        let pid = Int(getpid())
        let ticks = try #require(ProcessLiveness.startTicks(pid: pid))
        let here = StaleStatus.hostName
        #expect(
            WriterLiveness.state(hostName: "elsewhere.invalid", pid: pid, startTicks: ticks, executableName: "x")
                == .elsewhere)
        #expect(WriterLiveness.state(hostName: here, pid: pid, startTicks: ticks, executableName: "x") == .running)
        #expect(WriterLiveness.state(hostName: here, pid: pid, startTicks: ticks + 1, executableName: "x") == .gone)
        #expect(WriterLiveness.mayRun(pid: pid))
        #expect(StallStatus.inProgress.isMentioned(in: Data(#"{"status":"inProgress"}"#.utf8)))
        #expect(!StallStatus.inProgress.isMentioned(in: Data(#"{"status":"ended"}"#.utf8)))
    }
}
