import Foundation

/// A child process's standard output and error going to two files instead of pipes, so a chatty
/// child can never fill a pipe buffer and block while its parent waits for it to exit.
package struct OutputFiles {
    /// Where the child's standard output goes.
    package let stdout: URL
    /// Where the child's standard error goes.
    package let stderr: URL
    private let stdoutHandle: FileHandle
    private let stderrHandle: FileHandle

    /// Creates the two files empty (replacing what was there), opens them, and makes them
    /// `process`'s standard output and error; its standard input becomes `/dev/null`.
    package init(stdout: URL, stderr: URL, for process: Process) throws {
        self.stdout = stdout
        self.stderr = stderr
        _ = FileManager.default.createFile(atPath: stdout.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderr.path, contents: nil)
        stdoutHandle = try FileHandle(forWritingTo: stdout)
        stderrHandle = try FileHandle(forWritingTo: stderr)
        process.standardOutput = stdoutHandle
        process.standardError = stderrHandle
        process.standardInput = FileHandle.nullDevice
    }

    /// Closes this side's handles (the child keeps its own); call once the child has exited.
    package func close() throws {
        try stdoutHandle.close()
        try stderrHandle.close()
    }
}
