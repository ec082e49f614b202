import Foundation
import Testing

/// The real `nio-stall-demo` server, started on a thread of its own with a report folder, driven
/// by curl, and stopped with its `/quit` route.
struct NIOStallDemoServer {
    let base: String
    private let server: LockedRun
    private let deadline: Date

    /// Starts the server writing reports to `reports` (with more `options`); waits for the port it
    /// listens on. With `deniedCalls` (comma-separated), runs it where those system calls fail with
    /// EPERM (`seccomp-run`).
    static func start(
        reports: URL, portFile: URL, threads: Int = 2, executable: String = "nio-stall-demo",
        deniedCalls: String? = nil, options: [String] = []
    ) throws -> NIOStallDemoServer {
        let server = LockedRun()
        let arguments =
            [
                "--output", reports.path, "--port-file", portFile.path, "--threads", "\(threads)", "--threshold-ms",
                "250",
            ] + options
        let launch: (arguments: [String], executable: String) =
            if let deniedCalls {
                ([deniedCalls, "--", try StallReportCLI.binary(named: executable).path] + arguments, "seccomp-run")
            } else {
                (arguments, executable)
            }
        let thread = Thread {
            server.set(Result { try StallReportCLI.run(launch.arguments, timeout: 180, executable: launch.executable) })
        }
        thread.start()
        let deadline = Date().addingTimeInterval(60)
        var port: String?
        while port == nil && Date() < deadline && !server.isSet {
            port = (try? String(contentsOf: portFile, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            if port?.isEmpty ?? true {
                port = nil
                usleep(50_000)
            }
        }
        let found = try #require(port, "the server never wrote its port: \(String(describing: try? server.get()))")
        return NIOStallDemoServer(base: "http://127.0.0.1:\(found)", server: server, deadline: deadline)
    }

    /// curl's output for `paths`, fetched in one run (kept-alive connections).
    func curl(_ paths: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let run = try StallReportCLI.run(
            ["-sS", "--max-time", "30"] + paths.map { base + $0 }, timeout: 60, executable: "/usr/bin/curl")
        #expect(run.status == 0, "\(run)", sourceLocation: sourceLocation)
        return run.stdout
    }

    /// Stops the server; its run.
    func stop() throws -> StallReportCLI.Run {
        _ = try curl(["/quit"])
        while !server.isSet && Date() < deadline.addingTimeInterval(60) { usleep(50_000) }
        return try #require(try server.get())
    }
}

/// The result of a run on another thread.
private final class LockedRun: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<StallReportCLI.Run, any Error>?

    func set(_ value: Result<StallReportCLI.Run, any Error>) { lock.withLock { result = value } }
    var isSet: Bool { lock.withLock { result != nil } }
    func get() throws -> StallReportCLI.Run? { try lock.withLock { result }?.get() }
}
