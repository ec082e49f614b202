import Foundation

/// Runs `/usr/bin/env arguments…`, waiting at most `timeout`; returns its status, its standard
/// output and its standard error. Both go to files, not pipes: a chatty tool cannot fill a pipe
/// buffer and block.
func runTool(_ arguments: [String], timeout: Duration = .seconds(60)) throws -> (status: Int32, output: String, errors: String) {
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("StallMonitorTests-run-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }
    let outURL = scratch.appendingPathComponent("stdout")
    let errURL = scratch.appendingPathComponent("stderr")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let out = try FileHandle(forWritingTo: outURL)
    let err = try FileHandle(forWritingTo: errURL)
    defer { try? out.close(); try? err.close() }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.standardOutput = out
    process.standardError = err
    try process.run()
    guard waitUntil(timeout: timeout, { !process.isRunning }) else {
        process.terminate()
        throw TestTimeout(what: arguments.prefix(3).joined(separator: " "))
    }
    let read = { (url: URL) in (try? String(contentsOf: url, encoding: .utf8)) ?? "" }
    return (process.terminationStatus, read(outURL), read(errURL))
}
