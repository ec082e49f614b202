import Foundation

/// A running `hummingbird-stall-demo` (Examples/HummingbirdServer, release; `Scripts/bench` links
/// it next to the other binaries) for the pool figure: started on a free port, spoken to with
/// curl and wrk, stopped with SIGTERM (a graceful shutdown).
final class HummingbirdServerProcess: PortFileServer {
    private let scratch: URL

    /// What the server watches.
    enum Mode: String {
        /// Its event loops, the pool and blocking calls (the server's default).
        case watched
        /// Its event loops and the pool, not blocking calls.
        case watchedWithoutBlockingCalls = "without-blocking-calls"
        /// Nothing: no monitor.
        case unwatched

        /// The server's command line in this mode.
        func arguments(reports: URL, portFile: URL) -> [String] {
            [reports.path, portFile.path] + (self == .watched ? [] : [rawValue])
        }
    }

    init(_ context: BenchContext, mode: Mode) throws {
        scratch = context.scratch
        try super.init(context, binary: "hummingbird-stall-demo", directory: "hummingbird-reports", attempts: 500) {
            reports, portFile in mode.arguments(reports: reports, portFile: portFile)
        }
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
}
