import Foundation
import Testing

/// Watching the concurrency pool of a host that never uses it (the real `nio-stall-demo`, whose
/// event loops do all its work) adds no thread of the host's kind: no pool worker, and so none of
/// libdispatch's workqueue monitor, which wakes its manager thread every second once a first
/// worker exists.
@Suite("a watched pool the host never uses")
struct UnusedPoolTests {
    @Test("the monitor starts no pool worker; its layout thread is gone once it watches")
    func watchingStartsNoPoolWorker() throws {
        let directory = try ReportDirectory()
        let reports = directory.url.appendingPathComponent("reports")
        let portFile = directory.url.appendingPathComponent("port")
        let server = try NIOStallDemoServer.start(reports: reports, portFile: portFile)
        // A request on an event loop: the host works, on its loops only.
        #expect(try server.curl(["/fast"]) == "ok\n")
        let pid = try #require(Self.process(withArgument: reports.path), "no process runs with \(reports.path)")
        // The layout thread ends once its tasks ran (it may wait for a CPU on a loaded machine).
        var names = Self.threadNames(of: pid)
        let deadline = Date().addingTimeInterval(20)
        while names.contains("stall-layout") && Date() < deadline {
            usleep(20_000)
            names = Self.threadNames(of: pid)
        }
        let run = try server.stop()
        #expect(run.status == 0, "\(run)")
        // The monitor watched the pool (its slots are the loops named "?").
        #expect(run.stdout.contains("\"?\""), "\(run.stdout)")
        #expect(names.contains("stall-watchdog"), "\(names)")
        #expect(!names.contains { $0.hasSuffix("default-qos") || $0 == "DispatchWorker" }, "\(names)")
        #expect(!names.contains("stall-layout"), "\(names)")
    }

    /// The id of the process one of whose arguments is `argument`.
    static func process(withArgument argument: String) -> Int32? {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = Int32(entry),
                let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline")
            else { continue }
            let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            if arguments.contains(argument) { return pid }
        }
        return nil
    }

    /// The kernel names of process `pid`'s threads.
    static func threadNames(of pid: Int32) -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.compactMap {
            (try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .newlines)
        }
    }
}
