import Foundation

/// Runs an external program with text on standard input and collects its standard output.
///
/// Input and output go through temporary files, so a large input or output can never deadlock on
/// a full pipe. Standard error is kept for the error message.
package enum ToolRunner {
    /// Why a run failed.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        /// One line for people.
        package var description: String
    }

    /// Runs `executable arguments…` with `input` on stdin; returns stdout when it exits with 0.
    package static func run(_ executable: String, _ arguments: [String], input: String) throws(Failure) -> String {
        let manager = FileManager.default
        let scratch = manager.temporaryDirectory.appendingPathComponent("stallreport-tool-\(UUID().uuidString)")
        do {
            try manager.createDirectory(at: scratch, withIntermediateDirectories: true)
        } catch {
            throw Failure(
                description: "cannot create a temporary directory: \((error as NSError).localizedDescription)")
        }
        defer { try? manager.removeItem(at: scratch) }
        let inURL = scratch.appendingPathComponent("in")
        let outURL = scratch.appendingPathComponent("out")
        let errURL = scratch.appendingPathComponent("err")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        do {
            try Data(input.utf8).write(to: inURL)
            _ = manager.createFile(atPath: outURL.path, contents: nil)
            _ = manager.createFile(atPath: errURL.path, contents: nil)
            let stdin = try FileHandle(forReadingFrom: inURL)
            let stdout = try FileHandle(forWritingTo: outURL)
            let stderr = try FileHandle(forWritingTo: errURL)
            defer {
                try? stdin.close()
                try? stdout.close()
                try? stderr.close()
            }
            process.standardInput = stdin
            process.standardOutput = stdout
            process.standardError = stderr
            try process.run()
            process.waitUntilExit()
        } catch {
            throw Failure(description: "cannot run \(executable): \((error as NSError).localizedDescription)")
        }
        let output = String(
            decoding: (try? BoundedFileReader.contents(of: outURL.path, limit: .max).get()) ?? Data(), as: UTF8.self)
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            let errorText = String(
                decoding: (try? BoundedFileReader.contents(of: errURL.path, limit: .max).get()) ?? Data(), as: UTF8.self
            )
            let firstLine = errorText.split(separator: "\n").first.map(String.init) ?? ""
            throw Failure(
                description:
                    "\((executable as NSString).lastPathComponent) failed (status \(process.terminationStatus))\(firstLine.isEmpty ? "" : ": " + firstLine)"
            )
        }
        return output
    }
}
