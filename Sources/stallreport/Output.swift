import ArgumentParser
import Foundation
import StallReportKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writing to stdout, stderr and files.
enum Output {
    /// Writes text to standard output.
    static func stdout(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// Writes data to standard output.
    static func stdout(_ data: Data) {
        FileHandle.standardOutput.write(data)
    }

    /// Writes text to standard error.
    static func stderr(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// Writes one `stallreport: …` line to standard error.
    static func note(_ line: String) {
        stderr("stallreport: \(line)\n")
    }

    /// True when standard output is a terminal.
    static var stdoutIsTerminal: Bool {
        isatty(STDOUT_FILENO) == 1
    }

    /// Writes `data` to stdout for `-`; else to `path`, atomically (temporary file, then rename)
    /// over a regular file or a new path, in place into anything else (a device, a FIFO): see
    /// ``OutputDestination``.
    static func write(_ data: Data, to path: String) throws {
        if path == "-" {
            stdout(data)
        } else {
            try OutputDestination.write(data, to: path)
        }
    }

    /// Says `error: <message>` on stderr and returns exit status 2 (input error) to throw.
    static func inputError(_ message: String) -> ExitCode {
        note("error: \(message)")
        return ExitCode(ExitStatus.inputError)
    }

    /// Writes `data` like ``write(_:to:)``; when producing or writing it fails, says `cannot write [<what> to ]<path>`
    /// and throws exit status 2. After writing to a file (not stdout), prints
    /// `wrote <confirming> to <path>` when `confirming` is given.
    static func save(
        _ data: @autoclosure () throws -> Data, to path: String, what: String? = nil, confirming: String? = nil
    ) throws {
        do {
            try write(try data(), to: path)
        } catch {
            throw inputError(
                "cannot write \(what.map { "\($0) to " } ?? "")\(path): \((error as NSError).localizedDescription)")
        }
        if path != "-", let confirming { stdout("wrote \(confirming) to \(path)\n") }
    }

    /// Appends text to a file, creating it if needed.
    static func append(_ text: String, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        if !FileManager.default.fileExists(atPath: path) {
            try Data().write(to: url)
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
    }
}
