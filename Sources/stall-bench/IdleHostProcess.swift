import Foundation

/// A host process that idles for figure 15: started with its arguments, ready once it printed
/// `ready` on stdout (or once `readyFile` is not empty), stopped with SIGTERM.
final class IdleHostProcess {
    let pid: Int32
    private let process: Process
    private let output: URL

    /// Starts `executable` and waits (up to 60 s) until it is ready.
    init(_ executable: URL, _ arguments: [String], scratch: URL, readyFile: URL? = nil) throws {
        output = scratch.appendingPathComponent("idle-host-\(UUID().uuidString).stdout")
        process = try ServerLaunch.start(executable, arguments, output: output)
        pid = process.processIdentifier
        let deadline = CStallClock.now() + 60_000_000_000
        while !isReady(readyFile) {
            guard process.isRunning, CStallClock.now() < deadline else {
                stop()
                throw BenchError(
                    "\(executable.lastPathComponent) \(arguments.joined(separator: " ")) did not get ready: \(printed())"
                )
            }
            usleep(20_000)
        }
    }

    private func isReady(_ readyFile: URL?) -> Bool {
        if let readyFile {
            return !((try? String(contentsOf: readyFile, encoding: .utf8)) ?? "").isEmpty
        }
        return printed().split(separator: "\n").contains("ready")
    }

    /// What the host printed so far.
    func printed() -> String {
        (try? String(contentsOf: output, encoding: .utf8)) ?? ""
    }

    /// Stops the host: SIGTERM, then SIGKILL after 5 s.
    func stop() {
        if process.isRunning { process.terminate() }
        for _ in 0..<500 where process.isRunning { usleep(10_000) }
        if process.isRunning { kill(pid, SIGKILL) }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: output)
    }
}

extension IdleHostProcess: ServerProcessThreads {}
