import Foundation
import ToolSupport

/// Runs `/usr/bin/env arguments…`, waiting at most `timeout`; returns its status, its standard
/// output and its standard error. Both go to files, not pipes: a chatty tool cannot fill a pipe
/// buffer and block.
func runTool(
    _ arguments: [String], timeout: Duration = .seconds(60)
) throws -> (status: Int32, output: String, errors: String) {
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
        "StallMonitorTests-run-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    let output = try OutputFiles(
        stdout: scratch.appendingPathComponent("stdout"), stderr: scratch.appendingPathComponent("stderr"),
        for: process)
    defer { try? output.close() }
    try process.run()
    guard waitUntil(timeout: timeout, { !process.isRunning }) else {
        process.terminate()
        throw TestTimeout(what: arguments.prefix(3).joined(separator: " "))
    }
    let read = { (url: URL) in (try? String(contentsOf: url, encoding: .utf8)) ?? "" }
    return (process.terminationStatus, read(output.stdout), read(output.stderr))
}
