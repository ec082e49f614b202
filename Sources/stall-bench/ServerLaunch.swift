import Foundation

/// How the benchmarks start a host or server binary.
enum ServerLaunch {
    /// Starts `executable arguments…` with its stdout in `output` (created empty) and its stderr
    /// and stdin on /dev/null.
    static func start(_ executable: URL, _ arguments: [String], output: URL) throws -> Process {
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }
}
