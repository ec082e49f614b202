import Foundation

/// Runs `executable arguments…` with `input` on its standard input and returns its exit status
/// and standard output. The input is written from a thread of its own while the output is read,
/// so a filter that answers before it has read everything (gzip, swift-demangle) cannot
/// deadlock on two full pipes.
package func runFilter(_ executable: String, _ arguments: [String], input: Data) throws -> (status: Int32, output: Data)
{
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let stdin = Pipe()
    let stdout = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    try process.run()
    let writer = Thread {
        stdin.fileHandleForWriting.write(input)
        try? stdin.fileHandleForWriting.close()
    }
    writer.start()
    let output = stdout.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, output)
}
