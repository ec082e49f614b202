import Foundation

/// What every figure gets: the mode, a scratch directory and where the other binaries are.
final class BenchContext: @unchecked Sendable {
    /// Few, short repetitions (checks the runner; not for numbers).
    let quick: Bool
    /// Scratch space, removed at the end.
    let scratch: URL
    /// Directory of `stallreport` and `stall-demo`.
    let binaries: URL
    /// This executable.
    let executable: URL
    /// Rounds of the server figures' CPU per request (11a, 11e, 13a, 13f) instead of their own
    /// count (`--server-rounds`): more narrow the rounds' interval on a noisy machine.
    var serverRounds: Int?
    /// The stall series shared by figures 5 and 6, run once.
    var stallSeries: StallSeries.Outcome?
    private var counter = 0

    init(quick: Bool, binaries: URL?) throws {
        self.quick = quick
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        self.executable = Bundle.main.executableURL?.resolvingSymlinksInPath() ?? executable
        self.binaries = binaries ?? self.executable.deletingLastPathComponent()
        let base = ProcessInfo.processInfo.environment["STALL_BENCH_TMPDIR"] ?? NSTemporaryDirectory()
        scratch = URL(fileURLWithPath: base, isDirectory: true).appendingPathComponent("stall-bench-\(getpid())")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    /// A new empty directory under the scratch space.
    func freshDirectory(_ name: String) -> URL {
        counter += 1
        let url = scratch.appendingPathComponent("\(name)-\(counter)", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The binary `name` next to this one (or in `--binaries`).
    func binary(_ name: String) throws -> URL {
        let url = binaries.appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw BenchError("\(url.path) not found: build it first (swift build -c release --product \(name))")
        }
        return url
    }

    /// `full` normally, `short` with `--quick`.
    func pick<T>(_ full: T, quick short: T) -> T { quick ? short : full }

    func cleanUp() {
        try? FileManager.default.removeItem(at: scratch)
    }
}

/// A benchmark that could not run.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
