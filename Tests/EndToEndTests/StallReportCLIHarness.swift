import Foundation
import StallReportKit
import StallReportKitTestSupport
import ToolSupport

#if canImport(Glibc)
import Glibc
#endif

/// Runs the built `stallreport` executable as a subprocess and captures what it prints.
enum StallReportCLI {
    /// What one run produced.
    struct Run: CustomStringConvertible {
        var status: Int32
        var stdout: String
        var stderr: String

        var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }
        /// Lines of stdout, keeping empty lines but not the empty piece after the final newline.
        var stdoutLines: [String] {
            var lines = stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if lines.last == "" { lines.removeLast() }
            return lines
        }

        var description: String { "exit \(status)\n--- stdout\n\(stdout)\n--- stderr\n\(stderr)" }
    }

    enum HarnessError: Error, CustomStringConvertible {
        case binaryNotFound([String])
        case timedOut([String])

        var description: String {
            switch self {
            case .binaryNotFound(let searched): return "binary not found; searched: \(searched.joined(separator: ", "))"
            case .timedOut(let arguments):
                return "stallreport \(arguments.joined(separator: " ")) did not finish within the time limit"
            }
        }
    }

    /// The executable `name` (`stallreport` or `stall-demo`): `STALLREPORT_BINARY` /
    /// `STALL_DEMO_BINARY` if set, else found next to the running test bundle by walking up from
    /// the test executable and `Bundle.main` to the products directory.
    static func binary(named name: String = "stallreport") throws -> URL {
        let variable = name.uppercased().replacingOccurrences(of: "-", with: "_") + "_BINARY"
        if let path = ProcessInfo.processInfo.environment[variable] { return URL(fileURLWithPath: path) }
        var starts: [URL] = []
        if let first = CommandLine.arguments.first {
            starts.append(URL(fileURLWithPath: first).resolvingSymlinksInPath().deletingLastPathComponent())
        }
        if let executable = Bundle.main.executableURL {
            starts.append(executable.resolvingSymlinksInPath().deletingLastPathComponent())
        }
        starts.append(Bundle.main.bundleURL.resolvingSymlinksInPath())
        var searched: [String] = []
        for start in starts {
            var directory = start
            for _ in 0..<5 {
                let candidate = directory.appendingPathComponent(name)
                searched.append(candidate.path)
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory),
                    !isDirectory.boolValue,
                    FileManager.default.isExecutableFile(atPath: candidate.path)
                {
                    return candidate
                }
                directory = directory.deletingLastPathComponent()
            }
        }
        throw HarnessError.binaryNotFound(searched)
    }

    /// Runs `body` (a spawn) with no signal blocked on the calling thread, so that the child starts
    /// with an empty signal mask as from a shell: a test runs on a worker thread that blocks most
    /// signals, and a child inheriting that mask misbehaves (gdb never sees its inferior stop).
    static func withUnblockedSignals<T>(_ body: () throws -> T) rethrows -> T {
        var none = sigset_t()
        var saved = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, &saved)
        defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
        return try body()
    }

    /// Runs `stallreport arguments…` (or the built product `executable`, or the program at an
    /// absolute path) in `directory` with `environment` added to (or, for nil
    /// values, removed from) the test process's environment. Output goes through temporary files,
    /// so a large output cannot deadlock a pipe. Fails after `timeout` seconds.
    static func run(
        _ arguments: [String], in directory: URL? = nil, environment: [String: String?] = [:],
        timeout: TimeInterval = 120, executable: String = "stallreport"
    ) throws -> Run {
        let process = Process()
        process.executableURL =
            executable.hasPrefix("/") ? URL(fileURLWithPath: executable) : try binary(named: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        var env = ProcessInfo.processInfo.environment
        // A clean slate for what the CLI reacts to, unless the test sets it.
        for key in ["GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE", "NO_COLOR", "COLUMNS"] {
            env[key] = nil
        }
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
            "stallreport-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let output = try OutputFiles(
            stdout: scratch.appendingPathComponent("stdout"), stderr: scratch.appendingPathComponent("stderr"),
            for: process)
        try withUnblockedSignals { try process.run() }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() > deadline {
                process.terminate()
                process.waitUntilExit()
                throw HarnessError.timedOut(arguments)
            }
            usleep(5_000)
        }
        process.waitUntilExit()
        try output.close()
        return Run(
            status: process.terminationStatus,
            stdout: String(
                decoding: try BoundedFileReader.contents(of: output.stdout.path, limit: .max).get(), as: UTF8.self),
            stderr: String(
                decoding: try BoundedFileReader.contents(of: output.stderr.path, limit: .max).get(), as: UTF8.self))
    }
}

/// A temporary directory of reports for one test, removed when the test's value is dropped.
final class ReportDirectory {
    let url: URL
    var path: String { url.path }

    init() throws {
        url = try ReportFixtures.temporaryDirectory()
    }

    deinit {
        // Make everything removable again (a test may have made a file unreadable).
        if let enumerator = FileManager.default.enumerator(atPath: url.path) {
            for case let relative as String in enumerator {
                chmod(url.appendingPathComponent(relative).path, 0o700)
            }
        }
        try? FileManager.default.removeItem(at: url)
    }

    /// A subdirectory, created.
    func subdirectory(_ name: String) throws -> URL {
        let sub = url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        return sub
    }

    /// Writes raw bytes as `name`.
    @discardableResult
    func file(_ name: String, _ data: Data) throws -> URL {
        let target = url.appendingPathComponent(name)
        try FileManager.default.createDirectory(
            at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: target)
        return target
    }

    /// Writes text as `name`.
    @discardableResult
    func file(_ name: String, _ text: String) throws -> URL {
        try file(name, Data(text.utf8))
    }
}

/// The stalls of a demo-like app run: fingerprints with known numbers.
enum DemoScenario {
    static let spinSymbols = ["StallDemo.spinCPU(milliseconds:)", "StallDemo.Stalls.cpuSpin()"]
    static let lockSymbols = ["StallDemo.waitOnMutex()", "StallDemo.Stalls.mutexWait()"]
    static let sleepSymbols = ["StallDemo.Stalls.sleep()"]
    static let recursionSymbols = [
        "StallDemo.recurse(depth:)", "StallDemo.recurse(depth:)", "StallDemo.Stalls.deepRecursion()",
    ]
    static let start = Date(timeIntervalSince1970: 1_772_366_400)  // 2026-03-01T12:00:00Z

    static func report(
        _ symbols: [String], _ ms: Double, minute: Double, status: StallStatus = .ended,
        classification: StallClassification = .cpu, leaf: String? = nil, syscall: String? = nil
    ) -> StallReport {
        ReportFixtures.report(
            appSymbols: symbols, durationMs: ms, startedAt: start.addingTimeInterval(minute * 60), status: status,
            classification: classification, leaf: leaf, syscall: syscall)
    }

    /// 9 stalls: spin ×4 (300, 600, 900, 1200 ms = 3.00 s), lock ×2 (500 ended, 1500 fatal = 2.00 s),
    /// sleep ×2 (400, 410 ms, blocked in usleep), recursion ×1 (700 ms, inProgress).
    static let reports: [(String, StallReport)] = [
        ("r01-spin.json", report(spinSymbols, 300, minute: 0)),
        ("r02-spin.json", report(spinSymbols, 600, minute: 1)),
        ("r03-spin.json", report(spinSymbols, 900, minute: 2)),
        ("r04-spin.json", report(spinSymbols, 1_200, minute: 3)),
        ("r05-lock.json", report(lockSymbols, 500, minute: 4, classification: .blocked, leaf: "__lll_lock_wait")),
        (
            "r06-lock.json",
            report(lockSymbols, 1_500, minute: 5, status: .fatal, classification: .blocked, leaf: "__lll_lock_wait")
        ),
        (
            "r07-sleep.json",
            report(sleepSymbols, 400, minute: 6, classification: .blocked, leaf: "usleep", syscall: "nanosleep")
        ),
        (
            "r08-sleep.json",
            report(sleepSymbols, 410, minute: 7, classification: .blocked, leaf: "usleep", syscall: "nanosleep")
        ),
        ("r09-recursion.json", report(recursionSymbols, 700, minute: 8, status: .inProgress)),
    ]

    static func fingerprint(_ symbols: [String]) -> String {
        reports.first { $0.1.frames.contains { $0.symbol == symbols[0] } }!.1.fingerprint
    }

    static var spin: String { fingerprint(spinSymbols) }
    static var lock: String { fingerprint(lockSymbols) }
    static var sleep: String { fingerprint(sleepSymbols) }
    static var recursion: String { fingerprint(recursionSymbols) }

    /// A fresh directory with the whole scenario written under `reports/`: the setup most
    /// `stallreport` suites share.
    static func newDirectory() throws -> (directory: ReportDirectory, reports: URL) {
        let directory = try ReportDirectory()
        return (directory, try write(to: directory))
    }

    /// Writes the scenario into `directory` (optionally under a subdirectory).
    static func write(
        to directory: ReportDirectory, under subdirectory: String = "reports", only names: Set<String>? = nil
    ) throws -> URL {
        let target = try directory.subdirectory(subdirectory)
        for (name, report) in reports where names?.contains(name) ?? true {
            try ReportFixtures.write(report, to: target, name: name)
        }
        return target
    }
}
