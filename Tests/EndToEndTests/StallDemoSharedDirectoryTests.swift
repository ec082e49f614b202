import Foundation
import StallReportKit
import Testing

/// Two real `stall-demo` processes share one report directory under a quota: the quota deletes
/// only reports whose process is done (the other one's own, or a dead process's), never a live
/// process's reports, and never a stall still being written.
@Suite("stall-demo: two processes share a directory under a quota", .serialized)
struct StallDemoSharedDirectoryTests {
    @Test(
        "the quota of one process never deletes a live process's reports (in progress or not); a dead process's go first"
    )
    func quotaSparesLiveProcesses() throws {
        let directory = try ReportDirectory()
        let reports = directory.url.appendingPathComponent("reports")
        try FileManager.default.createDirectory(at: reports, withIntermediateDirectories: true)
        // Two old reports, older than anything the demos write: one of a process that runs (this
        // test process), one of a process that has exited.
        let dead = Process()
        dead.executableURL = URL(fileURLWithPath: "/bin/true")
        try dead.run()
        dead.waitUntilExit()
        let liveName = "stall-20200101T000000.000Z-p\(getpid())-0001.json"
        let deadName = "stall-20200101T000001.000Z-p\(dead.processIdentifier)-0001.json"
        for name in [liveName, deadName] {
            try Data("{}".utf8).write(to: reports.appendingPathComponent(name))
        }

        // Process A: a stall that lasts (asleep in poll), its inProgress report on disk.
        let holder = try StallDemoProductionTests.launch(
            ["--output", reports.path, "--only", "park-sleep", "--park-seconds", "120"], directory: directory.url)
        defer {
            if holder.isRunning {
                kill(holder.processIdentifier, SIGKILL)
                holder.waitUntilExit()
            }
        }
        let announced = StallDemoProductionTests.firstReport(in: reports, seconds: 30) {
            $0.process.pid == Int(holder.processIdentifier)
        }
        let holding = try #require(announced, "process A wrote no inProgress report within 30 s")
        #expect(holding.status == .inProgress)
        let holdingName = try #require(
            Self.reportNames(in: reports).first { StallReportName.pid(of: $0) == Int(holder.processIdentifier) })

        // Process B: six stalls with a quota of 2 reports.
        let writer = try StallReportCLI.run(
            ["--output", reports.path, "--max-report-files", "2"], timeout: 180, executable: "stall-demo")
        #expect(writer.status == 0, "\(writer)")
        // Six stalls; a congestion stall may be split in two on a loaded machine.
        let written = writer.stdout.split(separator: "\n").filter { $0.hasPrefix("wrote ") }.count
        #expect(written >= 6, "\(writer.stdout)")

        let left = Self.reportNames(in: reports)
        #expect(left.contains(liveName), "a report of a running process was deleted: \(left)")
        #expect(left.contains(holdingName), "the live inProgress report of process A was deleted: \(left)")
        #expect(!left.contains(deadName), "the dead process's report goes first: \(left)")
        // The two reports B may not delete fill the quota: of its own, only the newest is left.
        let own = left.filter { ![liveName, holdingName].contains($0) }
        #expect(own.count == 1, "\(left)")
        #expect(holder.isRunning, "process A still holds its stall")

        // B's session record counts what it deleted: all of its own but one, and the dead process's.
        let sessions = try FileManager.default.contentsOfDirectory(atPath: reports.path).filter {
            $0.hasSuffix(".session")
        }
        let records = try sessions.map {
            try SessionRecord.decode(from: Data(contentsOf: reports.appendingPathComponent($0)))
        }
        let writerRecord = try #require(records.first { $0.pid != Int(holder.processIdentifier) })
        #expect(writerRecord.reportsDropped["deletedForQuota"] == written, "\(writerRecord.reportsDropped)")
        #expect(writerRecord.cleanStop)
    }

    private static func reportNames(in directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter {
            $0.hasPrefix("stall-") && $0.hasSuffix(".json")
        }.sorted()
    }
}

/// The writer's pid in a report file name `stall-<time>-p<pid>-<n>.json`.
private enum StallReportName {
    static func pid(of name: String) -> Int? {
        let parts = name.dropLast(".json".count).split(separator: "-")
        guard parts.count >= 4, parts[parts.count - 2].first == "p" else { return nil }
        return Int(parts[parts.count - 2].dropFirst())
    }
}
