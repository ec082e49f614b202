import Foundation

/// A server binary a figure runs on a free port: started with its reports, its stdout and the
/// file it writes its port to in a fresh directory, listening once that file holds the port.
/// The subclasses say how to speak to it and how to stop it.
class PortFileServer: ServerProcessThreads {
    /// The binary's name (in errors).
    let name: String
    /// The server's process id.
    var pid: Int32 { process.processIdentifier }
    /// `http://127.0.0.1:<port>`.
    let url: String
    /// The directory of its reports (its stdout and port file are there too).
    let reports: URL
    /// The running server.
    let process: Process
    /// Its stdout.
    let output: URL

    /// Starts `binary` (from `context`) with `arguments(reports, portFile)` in a fresh directory
    /// named `directory`, and waits until it wrote its port (`attempts` looks 20 ms apart);
    /// terminates it and throws when no port came.
    init(
        _ context: BenchContext, binary: String, directory: String, attempts: Int,
        arguments: (_ reports: URL, _ portFile: URL) -> [String]
    ) throws {
        name = binary
        reports = context.freshDirectory(directory)
        let portFile = reports.appendingPathComponent("port")
        output = reports.appendingPathComponent("stdout")
        process = try ServerLaunch.start(context.binary(binary), arguments(reports, portFile), output: output)
        var port = ""
        for _ in 0..<attempts where port.isEmpty {
            port = ((try? String(contentsOf: portFile, encoding: .utf8)) ?? "").trimmingCharacters(
                in: .whitespacesAndNewlines)
            if port.isEmpty { usleep(20_000) }
        }
        guard !port.isEmpty else {
            process.terminate()
            throw BenchError("\(binary) did not start")
        }
        url = "http://127.0.0.1:\(port)"
    }

    /// What the server printed so far.
    func printed() -> String {
        (try? String(contentsOf: output, encoding: .utf8)) ?? ""
    }

    /// The `stall-watchdog` thread's wake-ups and CPU time per second, and the whole process's
    /// CPU time per second, over `seconds` of sleep that starts 0.5 s from now.
    func watchdogRates(over seconds: Double) throws -> (wakeups: Double, cpuNanos: Double, processCPUNanos: Double) {
        usleep(500_000)
        guard let watchdog = thread(named: "stall-watchdog"), let before = threadCounts(watchdog) else {
            throw BenchError("no stall-watchdog thread in \(name)")
        }
        let processBefore = processCPUNanos()
        usleep(UInt32(seconds * 1e6))
        guard let after = threadCounts(watchdog) else { throw BenchError("the watchdog thread went away") }
        let processPerSecond = (processCPUNanos() - processBefore) / seconds
        return (
            (after.switches - before.switches) / seconds, (after.cpuNanos - before.cpuNanos) / seconds, processPerSecond
        )
    }
}
