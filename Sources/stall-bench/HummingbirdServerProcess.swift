import Foundation

/// A running `hummingbird-stall-demo` (Examples/HummingbirdServer, release; `Scripts/bench` links
/// it next to the other binaries) for the pool figure: started on a free port, spoken to with
/// curl and wrk, stopped with SIGTERM (a graceful shutdown).
final class HummingbirdServerProcess {
    let pid: Int32
    let url: String
    let reports: URL
    private let process: Process
    private let scratch: URL
    private let output: URL

    init(_ context: BenchContext, watched: Bool) throws {
        reports = context.freshDirectory("hummingbird-reports")
        scratch = context.scratch
        let portFile = reports.appendingPathComponent("port")
        output = reports.appendingPathComponent("stdout")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        process = Process()
        process.executableURL = try context.binary("hummingbird-stall-demo")
        process.arguments = [reports.path, portFile.path] + (watched ? [] : ["unwatched"])
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        pid = process.processIdentifier
        var port = ""
        for _ in 0..<500 where port.isEmpty {
            port = ((try? String(contentsOf: portFile, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            if port.isEmpty { usleep(20_000) }
        }
        guard !port.isEmpty else {
            process.terminate()
            throw BenchError("hummingbird-stall-demo did not start")
        }
        url = "http://127.0.0.1:\(port)"
    }

    /// `GET path` with curl; the body.
    func get(_ path: String) throws -> String {
        let run = try Subprocess.run("/usr/bin/curl", ["-sS", "--max-time", "30", url + path], scratch: scratch)
        guard run.status == 0 else { throw BenchError("curl \(path): \(run.stderr)") }
        return String(decoding: run.stdout, as: UTF8.self)
    }

    /// Stops the server (SIGTERM: Hummingbird shuts down gracefully, then the monitor stops).
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        for _ in 0..<1_000 where process.isRunning { usleep(10_000) }
        if process.isRunning { kill(pid, SIGKILL) }
        process.waitUntilExit()
    }

    /// What the server printed (after ``stop()``: its report lines and its closing counts).
    func printed() -> String {
        (try? String(contentsOf: output, encoding: .utf8)) ?? ""
    }
}

extension HummingbirdServerProcess: ServerProcessThreads {}
