import Foundation

/// A running `nio-stall-demo` (release build) for the SwiftNIO figure: started on a free port,
/// spoken to with curl and wrk, stopped through its `/quit` route.
final class NIOServerProcess: PortFileServer {
    init(_ context: BenchContext, monitored: Bool, extra: [String] = []) throws {
        try super.init(context, binary: "nio-stall-demo", directory: "nio-reports", attempts: 300) {
            reports, portFile in
            ["--output", reports.path, "--port-file", portFile.path, "--threads", "2"]
                + (monitored ? [] : ["--no-monitor"]) + extra
        }
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
        return printed().split(separator: "\n").last { $0.hasPrefix("{") }.map(String.init)
    }
}
