import Foundation

/// How the benchmarks start a host or server binary.
enum ServerLaunch {
    /// Starts `executable arguments…` with its stdout in `output` (created empty) and its stderr
    /// and stdin on /dev/null; `environment` is added to this process's.
    static func start(
        _ executable: URL, _ arguments: [String], output: URL, environment: [String: String] = [:]
    ) throws -> Process {
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }
}
