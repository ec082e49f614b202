import Foundation
import StallReportModel
import Testing

/// A real program that forks while it runs a monitor (`fork-host`): the child stops what it
/// inherited at once, its own monitor writes its reports under its own pid, and the parent's
/// monitor is unaffected.
@Suite("fork host", .serialized)
struct ForkHostTests {
    /// ThreadSanitizer kills a child of a multithreaded process that starts a thread.
    static var underThreadSanitizer: Bool {
        dlsym(dlopen(nil, RTLD_NOW), "__tsan_init") != nil
    }

    @Test(
        "a forked child's own monitor reports its stall under its pid; stopping either monitor in the child is prompt",
        .disabled(
            if: underThreadSanitizer, "ThreadSanitizer does not support threads started after a multithreaded fork"))
    func childMonitorReports() throws {
        try withScratchFolder("fork-host") { directory in
            let run = try StallReportCLI.run([directory.path], timeout: 120, executable: "fork-host")
            try #require(run.status == 0, "\(run)")
            let child = try #require(Self.fields(of: "child", in: run.stdout), "\(run.stdout)")
            let parent = try #require(Self.fields(of: "parent", in: run.stdout), "\(run.stdout)")
            #expect(child["stalls"] == "1" && child["written"] == "1", "\(child)")
            #expect(parent["stalls"] == "2" && parent["written"] == "2", "\(parent)")
            // Both stops join no absent thread and wait for no queue that cannot run (it took 5 s when
            // the writer was a dispatch queue); seconds of slack for a loaded machine.
            #expect(Int(child["inheritedStopMs"] ?? "") ?? .max < 2_000, "\(child)")
            #expect(Int(child["stopMs"] ?? "") ?? .max < 2_000, "\(child)")

            let reports = try AsyncMainHostTests.reports(in: directory)
            let byPID = Dictionary(grouping: reports, by: \.process.pid)
            #expect(
                byPID[Int(child["pid"] ?? "") ?? -1]?.count == 1, "\(reports.map { ($0.process.pid, $0.durationMs) })")
            #expect(
                byPID[Int(parent["pid"] ?? "") ?? -1]?.count == 2, "\(reports.map { ($0.process.pid, $0.durationMs) })")
            for report in reports {
                #expect(report.status == .ended)
                #expect(report.durationMs >= 350, "\(report.durationMs)")
            }
        }
    }

    @Test("a child that only sleeps and exits writes nothing and exits 0; the parent goes on")
    func idleChild() throws {
        try withScratchFolder("fork-host") { directory in
            let run = try StallReportCLI.run([directory.path, "idle"], timeout: 120, executable: "fork-host")
            try #require(run.status == 0, "\(run)")
            let parent = try #require(Self.fields(of: "parent", in: run.stdout), "\(run.stdout)")
            #expect(parent["child"] == "0" && parent["written"] == "2", "\(parent)")
            let pids = Set(try AsyncMainHostTests.reports(in: directory).map(\.process.pid))
            #expect(pids == [Int(parent["pid"] ?? "") ?? -1], "only the parent wrote reports: \(pids)")
            let sessions = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
                $0.hasPrefix("session-")
            }
            #expect(sessions.count == 1, "only the parent's session record: \(sessions)")
        }
    }

    /// The `key=value` fields of the output line that starts with `role`.
    private static func fields(of role: String, in output: String) -> [String: String]? {
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix(role + " ") }) else { return nil }
        return Dictionary(
            line.split(separator: " ").dropFirst().compactMap { field -> (String, String)? in
                let parts = field.split(separator: "=", maxSplits: 1)
                return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
            }, uniquingKeysWith: { $1 })
    }
}
