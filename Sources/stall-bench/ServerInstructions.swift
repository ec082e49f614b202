import Foundation

/// A server's instructions per request, counted by callgrind: they repeat within a few tenths of a
/// percent, where its CPU time per request under wrk swings by ±10 % between rounds on a shared
/// machine. The server (a copy without debug sections) runs under valgrind with one count per
/// thread; curl sends `warmUp` requests over one keep-alive connection, the counts are zeroed
/// (`callgrind_control -z`), curl sends `requests` more over another, and the counts are dumped.
/// Only the threads that serve requests are summed: a thread whose functions include one of
/// `servingMarkers` (a SwiftNIO event loop, a concurrency-pool job) and none of StallMonitor's own
/// threads' (whose looks depend on wall time, which valgrind stretches fifty-fold). User-space
/// instructions only: the system calls' time in the kernel, the same with and without, is left
/// out, so a ratio of two counts overstates the ratio of the CPU times.
struct ServerInstructions {
    /// Functions only StallMonitor's own threads run (the start routine of every thread it makes).
    static let monitorThreadMarkers = ["12StallMonitor12NativeThreadO5start"]
    /// Functions only request-serving threads run: a SwiftNIO event loop, a concurrency-pool job.
    static let servingMarkers = ["8NIOPosix9NIOThread", "swift_job_run"]

    /// Instructions per request, summed over the serving threads.
    var perRequest: Double
    /// How many threads were summed, and how many were left out as the monitor's.
    var servingThreads: Int
    var monitorThreads: Int

    /// Counts `binary arguments(reports, portFile)` answering `GET path`, the server's environment
    /// with `environment` added; `stop` ends the server (it gets the server's URL and process).
    /// Throws when valgrind cannot run it or it gives no count.
    static func measure(
        binary: URL, arguments: (_ reports: URL, _ portFile: URL) -> [String], environment: [String: String] = [:],
        path: String, requests: Int, warmUp: Int, context: BenchContext,
        stop: (_ url: String, _ process: Process) -> Void
    ) throws -> ServerInstructions {
        let directory = context.freshDirectory("callgrind-\(binary.lastPathComponent)")
        let callgrind = try Callgrind(executable: binary, scratch: directory)
        let out = directory.appendingPathComponent("callgrind.out")
        return try serve(
            binary, under: ["--tool=callgrind", "--separate-threads=yes", "--callgrind-out-file=\(out.path)"],
            workload: callgrind.workload, arguments: arguments, environment: environment, directory: directory,
            stop: stop
        ) { url, process in
            try get(url + path, times: warmUp, scratch: directory)
            try control("-z", process.processIdentifier, scratch: directory)
            try get(url + path, times: requests, scratch: directory)
            try control("-d", process.processIdentifier, scratch: directory)
            return try counts(in: directory, prefix: out.lastPathComponent + ".1-", requests: requests)
        }
    }

    /// How long `GET path` takes, curl to `binary arguments(…)` and back, in seconds per request
    /// over `requests` after `warmUp`: natively, or under callgrind (`underCallgrind`, counting
    /// nothing) for the slowdown valgrind brings.
    static func secondsPerRequest(
        binary: URL, underCallgrind: Bool, arguments: (_ reports: URL, _ portFile: URL) -> [String],
        environment: [String: String] = [:], path: String, requests: Int, warmUp: Int, context: BenchContext,
        stop: (_ url: String, _ process: Process) -> Void
    ) throws -> Double {
        let directory = context.freshDirectory("pace-\(binary.lastPathComponent)")
        let workload = underCallgrind ? try Callgrind(executable: binary, scratch: directory).workload : binary
        return try serve(
            binary, under: underCallgrind ? ["--tool=callgrind", "--callgrind-out-file=/dev/null"] : nil,
            workload: workload, arguments: arguments, environment: environment, directory: directory, stop: stop
        ) { url, _ in
            try get(url + path, times: warmUp, scratch: directory)
            let began = CStallClock.now()
            try get(url + path, times: requests, scratch: directory)
            return Double(CStallClock.now() - began) / 1e9 / Double(requests)
        }
    }

    /// Starts `workload` (`binary` or its copy; under valgrind with `valgrind` options when given)
    /// with `arguments(reports, portFile)` in `directory`, waits for its port, runs `body` with its
    /// URL and process, and ends it (`stop`, then SIGKILL after a minute).
    private static func serve<Result>(
        _ binary: URL, under valgrind: [String]?, workload: URL,
        arguments: (_ reports: URL, _ portFile: URL) -> [String], environment: [String: String], directory: URL,
        stop: (_ url: String, _ process: Process) -> Void, body: (_ url: String, _ process: Process) throws -> Result
    ) throws -> Result {
        let portFile = directory.appendingPathComponent("port")
        let reports = directory.appendingPathComponent("reports", isDirectory: true)
        let output = directory.appendingPathComponent("stdout")
        let process =
            try valgrind.map {
                try ServerLaunch.start(
                    URL(fileURLWithPath: "/usr/bin/valgrind"), $0 + [workload.path] + arguments(reports, portFile),
                    output: output, environment: environment)
            }
            ?? ServerLaunch.start(workload, arguments(reports, portFile), output: output, environment: environment)
        var port = ""
        // valgrind starts a Swift server in 5–30 s here.
        for _ in 0..<600 where port.isEmpty && process.isRunning {
            port = ((try? String(contentsOf: portFile, encoding: .utf8)) ?? "").trimmingCharacters(
                in: .whitespacesAndNewlines)
            if port.isEmpty { usleep(200_000) }
        }
        let url = "http://127.0.0.1:\(port)"
        defer {
            if process.isRunning {
                stop(url, process)
                for _ in 0..<6_000 where process.isRunning { usleep(10_000) }
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            }
            process.waitUntilExit()
        }
        guard !port.isEmpty else {
            throw BenchError(
                "\(binary.lastPathComponent) did not start\(valgrind == nil ? "" : " under valgrind") (exit \(process.isRunning ? 0 : process.terminationStatus))"
            )
        }
        return try body(url, process)
    }

    /// `GET url` `times` times over one connection (curl reuses it for the URLs of one command).
    private static func get(_ url: String, times: Int, scratch: URL) throws {
        let run = try Subprocess.run(
            "/usr/bin/curl", ["-sSf", "--max-time", "600"] + Array(repeating: url, count: times), scratch: scratch)
        guard run.status == 0 else {
            throw BenchError("curl \(url) ×\(times) under valgrind: \(run.stderr.suffix(300))")
        }
    }

    /// `callgrind_control <option> <pid>` (zero or dump every thread's counts).
    private static func control(_ option: String, _ pid: Int32, scratch: URL) throws {
        let run = try Subprocess.run("/usr/bin/callgrind_control", [option, "\(pid)"], scratch: scratch)
        guard run.status == 0 else { throw BenchError("callgrind_control \(option) failed: \(run.stderr.suffix(300))") }
    }

    /// Sums the dumped threads (`callgrind.out.1-NN`, one file a thread) that serve requests.
    private static func counts(in directory: URL, prefix: String, requests: Int) throws -> ServerInstructions {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(prefix) }
        guard !files.isEmpty else { throw BenchError("callgrind dumped no thread's counts in \(directory.path)") }
        var total = 0.0
        var serving = 0
        var monitor = 0
        for file in files {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            if monitorThreadMarkers.contains(where: text.contains) {
                monitor += 1
                continue
            }
            guard servingMarkers.contains(where: text.contains) else { continue }
            guard
                let line = text.split(separator: "\n").first(where: { $0.hasPrefix("totals:") }),
                let value = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
            else {
                throw BenchError("no totals line in \(file)")
            }
            total += value
            serving += 1
        }
        guard serving > 0 else { throw BenchError("no thread in \(directory.path) served requests") }
        return ServerInstructions(
            perRequest: total / Double(requests), servingThreads: serving, monitorThreads: monitor)
    }
}

extension ServerInstructions {
    /// Why rows of `binary` cannot be counted here (callgrind missing, `unavailable`'s reason: a
    /// binary not built); nil when they can.
    static func unavailableReason(_ unavailable: () -> String? = { nil }) -> String? {
        Callgrind.unavailableReason ?? unavailable()
    }

    /// The row said when it cannot be counted.
    static func unmeasured(_ figure: String, _ name: String, goal: Double, reason: String) -> ResultRow {
        ResultRow(
            figure, name, value: "not measured: \(reason)", goal: "≤ \(goal)", verdict: .info, method: "callgrind")
    }

    /// A judged row: instructions per request on the serving threads of `binary` with
    /// `arguments(true, interval, …)` (the variant) against `arguments(false, interval, …)` (the
    /// baseline), the poll interval `pace`'s, passing at most `goal` times.
    static func row(
        _ figure: String, _ name: String, goal: Double, binary: String, variants: String, context: BenchContext,
        pace: ServerPace, environment: @escaping (_ pollIntervalMs: Int) -> [String: String] = { _ in [:] },
        arguments: @escaping (_ variant: Bool, _ pollIntervalMs: Int, _ reports: URL, _ portFile: URL) -> [String],
        stop: (_ url: String, _ process: Process) -> Void
    ) throws -> ResultRow {
        let requests = context.pick(5_000, quick: 100)
        let warmUp = context.pick(500, quick: 20)
        let rounds = context.pick(3, quick: 1)
        let executable = try context.binary(binary)
        let interval = pace.pollIntervalMs
        var counts: [Bool: [ServerInstructions]] = [:]
        for round in 0..<rounds {
            for variant in round % 2 == 0 ? [false, true] : [true, false] {
                counts[variant, default: []].append(
                    try measure(
                        binary: executable, arguments: { arguments(variant, interval, $0, $1) },
                        environment: environment(interval), path: "/fast",
                        requests: requests, warmUp: warmUp, context: context, stop: stop))
            }
        }
        let with = Stats.median(counts[true, default: []].map(\.perRequest))
        let without = Stats.median(counts[false, default: []].map(\.perRequest))
        let ratio = with / max(without, 1)
        let pairs = zip(counts[true, default: []], counts[false, default: []]).map {
            $0.perRequest / max($1.perRequest, 1)
        }
        return .judged(
            figure, name,
            value:
                "\(Format.ratio(ratio)) (median \(Format.count(with)) vs \(Format.count(without)) instructions per request, \(with >= without ? "+" : "")\(Format.count(with - without)); rounds \(Format.ratio(pairs.min() ?? 0))–\(Format.ratio(pairs.max() ?? 0)))",
            goal: "≤ \(goal)", ok: ratio <= goal,
            method:
                "valgrind --tool=callgrind --separate-threads=yes on \(binary) (release, debug sections stripped), \(variants); curl GET /fast \(warmUp) times over one connection, counts zeroed, \(requests) times over another, counts dumped; the instructions of the threads that serve requests (event loops, pool workers; StallMonitor's own threads left out) ÷ requests; \(rounds) rounds alternating which goes first, a fresh server each run, medians. What the monitor does per unit of time (a token queued when a look finds a loop or worker busy) is counted at native pace: \(pace.description). User space only: the kernel's share of a request, the same in both, is left out, so this ratio overstates the CPU ratio",
            data: [
                "ratio": ratio, "instructionsPerRequest": with, "baselineInstructionsPerRequest": without,
                "requests": Double(requests), "rounds": Double(rounds), "lowestRoundRatio": pairs.min() ?? 0,
                "highestRoundRatio": pairs.max() ?? 0, "pollIntervalMs": Double(interval),
                "callgrindSlowdown": pace.slowdown,
                "servingThreads": Double(counts[true, default: []].first?.servingThreads ?? 0),
                "monitorThreadsLeftOut": Double(counts[true, default: []].first?.monitorThreads ?? 0),
            ])
    }
}
