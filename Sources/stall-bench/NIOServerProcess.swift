import Foundation

/// A running `nio-stall-demo` (release build) for the SwiftNIO figure: started on a free port,
/// spoken to with curl and wrk, stopped through its `/quit` route.
final class NIOServerProcess {
    let pid: Int32
    let url: String
    let reports: URL
    private let process: Process
    private let output: URL

    init(_ context: BenchContext, monitored: Bool, extra: [String] = []) throws {
        reports = context.freshDirectory("nio-reports")
        let portFile = reports.appendingPathComponent("port")
        output = reports.appendingPathComponent("stdout")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        process = Process()
        process.executableURL = try context.binary("nio-stall-demo")
        process.arguments = ["--output", reports.path, "--port-file", portFile.path, "--threads", "2"]
            + (monitored ? [] : ["--no-monitor"]) + extra
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        pid = process.processIdentifier
        var port = ""
        for _ in 0..<300 where port.isEmpty {
            port = ((try? String(contentsOf: portFile, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            if port.isEmpty { usleep(20_000) }
        }
        guard !port.isEmpty else {
            process.terminate()
            throw BenchError("nio-stall-demo did not start")
        }
        url = "http://127.0.0.1:\(port)"
    }

    /// `GET path` with curl; the body.
    func get(_ path: String, scratch: URL) throws -> String {
        let run = try Subprocess.run("/usr/bin/curl", ["-sS", "--max-time", "30", url + path], scratch: scratch)
        guard run.status == 0 else { throw BenchError("curl \(path): \(run.stderr)") }
        return String(decoding: run.stdout, as: UTF8.self)
    }

    /// Stops the server; its last stdout line (the monitor's counts) when it printed one.
    @discardableResult
    func stop(scratch: URL) -> String? {
        _ = try? get("/quit", scratch: scratch)
        for _ in 0..<500 where process.isRunning { usleep(10_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").last { $0.hasPrefix("{") }.map(String.init)
    }
}

extension NIOServerProcess: ServerProcessThreads {}
