import Foundation
import ToolSupport

/// Runs child processes, optionally under `/usr/bin/time -v` for their peak RSS.
enum Subprocess {
    /// What one child run produced.
    struct Run {
        var status: Int32
        var stdout: Data
        var stderr: String
        var seconds: Double
        /// "Maximum resident set size" from `/usr/bin/time -v`, in bytes (0 when not measured).
        var peakRSS: Double
        /// User plus system CPU time of the child and the children it waited for, from
        /// `/usr/bin/time -v` (its `wait4` rusage), in seconds (0 when not measured).
        var cpuSeconds: Double = 0
    }

    /// Runs `executable arguments…`; stdout goes to `stdoutFile` when given (else captured).
    /// Temporary files go into `scratch` (the run's own directory).
    static func run(
        _ executable: String, _ arguments: [String], scratch: URL, timed: Bool = false, stdoutFile: URL? = nil,
        environment: [String: String] = [:]
    ) throws -> Run {
        let process = Process()
        let timeLog = scratch.appendingPathComponent("time-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: timeLog) }
        if timed {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
            process.arguments = ["-v", "-o", timeLog.path, executable] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        }
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let outURL = stdoutFile ?? scratch.appendingPathComponent("out-\(UUID().uuidString)")
        let errURL = scratch.appendingPathComponent("err-\(UUID().uuidString)")
        defer {
            if stdoutFile == nil { try? FileManager.default.removeItem(at: outURL) }
            try? FileManager.default.removeItem(at: errURL)
        }
        let output = try OutputFiles(stdout: outURL, stderr: errURL, for: process)
        let began = CStallClock.now()
        try process.run()
        process.waitUntilExit()
        let seconds = Double(CStallClock.now() - began) / 1e9
        try output.close()
        var peak = 0.0
        var cpu = 0.0
        if timed, let text = try? String(contentsOf: timeLog, encoding: .utf8) {
            func field(_ name: String) -> Double? {
                text.split(separator: "\n").first(where: { $0.contains(name) })
                    .flatMap { $0.split(separator: ":").last }.flatMap {
                        Double($0.trimmingCharacters(in: .whitespaces))
                    }
            }
            peak = (field("Maximum resident set size") ?? 0) * 1024
            cpu = (field("User time (seconds)") ?? 0) + (field("System time (seconds)") ?? 0)
        }
        return Run(
            status: process.terminationStatus,
            stdout: stdoutFile == nil ? (try Data(contentsOf: outURL)) : Data(),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self),
            seconds: seconds, peakRSS: peak, cpuSeconds: cpu)
    }

    /// Runs a shell pipeline under `/usr/bin/time -v` (peak RSS is the largest process in it).
    static func shell(_ script: String, scratch: URL, stdoutFile: URL) throws -> Run {
        try run("/bin/sh", ["-c", script], scratch: scratch, timed: true, stdoutFile: stdoutFile)
    }
}
