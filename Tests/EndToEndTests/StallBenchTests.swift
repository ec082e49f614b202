import Foundation
import Glibc
import Testing

/// Runs the built `stall-bench` binary (the benchmark runner of `Scripts/bench`) on one short
/// figure to check that it works and writes a usable results table. No timing is asserted.
@Suite("stall-bench runner", .serialized)
struct StallBenchTests {
    /// Runs `stall-bench run --figure <figure> --quick` with its output in `<directory>/bench`;
    /// returns its `latest.json` and the directory (removed when released).
    private static func runQuick(
        figure: String, timeout: Double = 120
    ) throws -> (
        json: [String: Any], directory: ReportDirectory
    ) {
        let directory = try ReportDirectory()
        let output = directory.url.appendingPathComponent("bench")
        let run = try StallReportCLI.run(
            ["run", "--figure", figure, "--quick", "--output", output.path],
            environment: ["STALL_BENCH_TMPDIR": directory.path], timeout: timeout, executable: "stall-bench")
        try #require(run.status == 0, "\(run)")
        let json =
            try JSONSerialization.jsonObject(with: Data(contentsOf: output.appendingPathComponent("latest.json")))
            as? [String: Any]
        return (try #require(json), directory)
    }

    /// The rows of the first figure of a `latest.json`.
    private static func rows(_ json: [String: Any]) throws -> [[String: Any]] {
        let figures = try #require(json["figures"] as? [[String: Any]])
        return try #require(figures.first?["rows"] as? [[String: Any]])
    }

    @Test(
        "--merge keeps the other figures of latest.json, replaces the one run now and says when; a damaged file is refused"
    )
    func mergeReplacesOnlyTheFiguresRun() throws {
        let (first, directory) = try Self.runQuick(figure: "report-size")
        let output = directory.url.appendingPathComponent("bench")
        let latest = output.appendingPathComponent("latest.json")
        // The earlier run as if it had measured figure 7 too: its rows must survive the merge.
        var earlier = first
        var figures = try #require(first["figures"] as? [[String: Any]])
        var kept = figures[0]
        kept["figure"] = "memory"
        kept["rows"] = [
            [
                "figure": "7z", "name": "kept", "value": "kept row", "goal": "—", "verdict": "info", "method": "m",
                "data": [:],
            ]
        ]
        figures.insert(kept, at: 0)
        figures[1]["rows"] = [
            [
                "figure": "9z", "name": "stale", "value": "stale row", "goal": "—", "verdict": "info", "method": "m",
                "data": [:],
            ]
        ]
        earlier["figures"] = figures
        try JSONSerialization.data(withJSONObject: earlier).write(to: latest)

        let merged = try StallReportCLI.run(
            ["run", "--figure", "report-size", "--quick", "--merge", "--output", output.path],
            environment: ["STALL_BENCH_TMPDIR": directory.path], timeout: 120, executable: "stall-bench")
        try #require(merged.status == 0, "\(merged)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: latest)) as? [String: Any])
        let after = try #require(json["figures"] as? [[String: Any]])
        #expect(after.map { $0["figure"] as? String } == ["memory", "report-size"])
        let ids = after.flatMap { ($0["rows"] as? [[String: Any]] ?? []).compactMap { $0["figure"] as? String } }
        #expect(ids.contains("7z") && !ids.contains("9z") && ids.contains("9a"), "\(ids)")
        #expect(after[1]["measuredAt"] as? String != nil)
        #expect(json["startedAt"] as? String == first["startedAt"] as? String, "the first run's header stays")
        let reruns = try #require(json["reruns"] as? [[String: Any]])
        #expect(reruns.count == 1 && reruns.first?["figures"] as? [String] == ["report-size"])
        let markdown = try String(contentsOf: output.appendingPathComponent("latest.md"), encoding: .utf8)
        #expect(
            markdown.contains("Figure 9 was run later, at") && markdown.contains("| 7z |")
                && markdown.contains("| 9a |"))

        try Data("{\"figures\": 3".utf8).write(to: latest)
        let refused = try StallReportCLI.run(
            ["run", "--figure", "report-size", "--quick", "--merge", "--output", output.path],
            environment: ["STALL_BENCH_TMPDIR": directory.path], timeout: 120, executable: "stall-bench")
        #expect(refused.status != 0)
        #expect(refused.stderr.contains(latest.path) && refused.stderr.contains("not a stall-bench results file"))
        #expect(
            try String(contentsOf: latest, encoding: .utf8) == "{\"figures\": 3", "the damaged file is left as it was")
    }

    @Test("--figure report-size --quick writes latest.json and latest.md with the figure's rows")
    func reportSizeQuick() throws {
        let (json, directory) = try Self.runQuick(figure: "report-size")
        #expect(json["quick"] as? Bool == true)
        let figures = try #require(json["figures"] as? [[String: Any]])
        #expect(figures.count == 1)
        #expect(figures.first?["figure"] as? String == "report-size")
        let rows = try Self.rows(json)
        #expect(rows.count >= 2, "one row per report size and the bytes per extra sample")
        for row in rows {
            #expect(["pass", "fail", "info"].contains(row["verdict"] as? String ?? ""))
            #expect(!(row["value"] as? String ?? "").isEmpty)
            #expect(!(row["method"] as? String ?? "").isEmpty)
        }
        let bytes = rows.compactMap { ($0["data"] as? [String: Any])?["bytes"] as? Double }
        #expect(bytes.count >= 2 && bytes.allSatisfy { $0 > 1_000 }, "real report files were measured: \(bytes)")

        let markdown = try String(contentsOf: directory.url.appendingPathComponent("bench/latest.md"), encoding: .utf8)
        #expect(markdown.contains("| Figure | Measure | Value | Goal | Verdict | How measured |"))
        #expect(markdown.contains("| 9a |"))
    }

    @Test("--figure blocking-stacks --quick: stacks of threads asleep in syscalls, counted from real reports")
    func blockingStacksQuick() throws {
        let rows = try Self.rows(try Self.runQuick(figure: "blocking-stacks").json)
        #expect(rows.map { $0["figure"] as? String } == ["10a", "10b", "10c", "10d", "10e", "10f"])
        let data = rows.compactMap { $0["data"] as? [String: Any] }
        #expect((data.first?["samples"] as? Double ?? 0) > 0, "samples of sleeping threads were counted: \(data)")
        #expect((data.last?["stacks"] as? Double ?? 0) > 0, "running stacks were timed: \(data)")
    }

    @Test("--figure main-actor --quick: an idle MainActor's watchdog cost and MainActor stalls, from async-main-host")
    func mainActorQuick() throws {
        let rows = try Self.rows(try Self.runQuick(figure: "main-actor").json)
        #expect(rows.map { $0["figure"] as? String } == ["12a", "12b"])
        let data = rows.compactMap { $0["data"] as? [String: Any] }
        #expect((data.first?["wakeupsPerSecond"] as? Double ?? 0) > 0, "the polling watchdog woke: \(data)")
        #expect(data.last?["runs"] as? Double == 2, "\(data)")
    }

    @Test(
        "memory-host: the idle monitor maps no unwinding library; a stall loads libdw (libunwind's remote unwinder when names are deferred on x86_64), never both"
    )
    func memoryHostLibraries() throws {
        let directory = try ReportDirectory()
        for offline in [false, true] {
            let run = try StallReportCLI.run(
                [
                    "memory-host", "--monitor", "--stall-ms", "600", "--release-after-ms", "300", "--reports",
                    directory.path,
                ]
                    + (offline ? ["--offline-symbols"] : []),
                timeout: 120, executable: "stall-bench")
            #expect(run.status == 0, "\(run)")
            let line = try #require(run.stdoutLines.last)
            let phases = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect((phases["librariesIdle"] as? [String]) == [], "nothing heavy before the first stall: \(phases)")
            #if arch(x86_64)
            let (used, unused) = offline ? ("libunwind", "libdw") : ("libdw", "libunwind")
            #else
            let (used, unused) = ("libdw", "libunwind")
            #endif
            #expect(
                (phases["librariesStall"] as? [String] ?? []).contains(used),
                "the stall's snapshots are unwound by \(used): \(phases)")
            #expect(
                !(phases["librariesStall"] as? [String] ?? []).contains(unused), "\(unused) is not needed: \(phases)")
        }
    }

    @Test("list names the eighteen figures; an unknown figure and zero server rounds are usage errors")
    func listAndValidation() throws {
        let list = try StallReportCLI.run(["list"], executable: "stall-bench")
        #expect(list.status == 0)
        #expect(list.stdoutLines.count == 18)
        #expect(
            list.stdout.contains("summarize-throughput") && list.stdout.contains("blocking-stacks")
                && list.stdout.contains("nio-server"))
        #expect(
            list.stdout.contains("main-actor") && list.stdout.contains("pool-server")
                && list.stdout.contains("async-chains"))
        #expect(list.stdout.contains("idle-per-loop") && list.stdout.contains("samples-under-load"))
        #expect(list.stdout.contains("blocking-call-cost") && list.stdout.contains("server-instructions"))
        let bad = try StallReportCLI.run(["run", "--figure", "nope"], executable: "stall-bench")
        #expect(bad.status == 64, "\(bad)")
        #expect(bad.stderr.contains("unknown figure"))
        let noRounds = try StallReportCLI.run(
            ["run", "--figure", "nio-server", "--server-rounds", "0"], executable: "stall-bench")
        #expect(noRounds.status == 64, "\(noRounds)")
        #expect(noRounds.stderr.contains("--server-rounds must be within"))
    }

    /// Whether valgrind and objcopy are installed and this process (so stall-bench, built beside
    /// it) is not built with a sanitizer, whose runtime valgrind cannot run.
    private static let callgrindUsable: Bool = {
        let tools =
            FileManager.default.isExecutableFile(atPath: "/usr/bin/valgrind")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/objcopy")
        let sanitized =
            dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil
            || dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil
        return tools && !sanitized
    }()

    @Test(
        "--figure blocking-call-cost --quick: callgrind counts what the blocking-call wrappers add to a call",
        .enabled(if: callgrindUsable))
    func blockingCallCost() throws {
        let all = try Self.rows(try Self.runQuick(figure: "blocking-call-cost").json)
        #expect(all.map { $0["figure"] as? String } == ["17a", "17b", "17c", "17d"])
        // 17d: a record's time on the calling thread, from the caller's clock (every call recorded).
        let record = all.last.flatMap { $0["data"] as? [String: Any] }
        #expect((record?["medianMicroseconds"] as? Double ?? -1) > 0, "\(all)")
        #expect((record?["records"] as? Double ?? 0) > 0, "\(all)")
        let rows = all.filter { ($0["figure"] as? String) != "17d" }
        let added = rows.map { (($0["data"] as? [String: Any])?["addedPerCall"] as? Double) ?? -1 }
        #expect(added.count == 3 && added.allSatisfy { $0 >= 0 }, "\(rows)")
        // A recorded call does more than a timed one, which does more than one on a thread that may block.
        #expect(added.count == 3 && added[0] < added[1] && added[1] < added[2], "\(added)")
    }

    @Test(
        "--figure server-instructions --quick: callgrind counts nio-stall-demo's requests on its event loops, with and without; the Hummingbird rows say what is not built",
        .enabled(if: callgrindUsable))
    func serverInstructions() throws {
        let all = try Self.rows(try Self.runQuick(figure: "server-instructions", timeout: 400).json)
        #expect(all.map { $0["figure"] as? String } == ["18a", "18b", "18c", "18d"])
        // The Hummingbird server is a package of its own, not built by this package's tests: its
        // rows are unjudged and name the binary to build (or, where built, counted like the rest).
        for row in all.dropFirst(2) where row["verdict"] as? String == "info" {
            #expect((row["value"] as? String ?? "").contains("not measured"), "\(row)")
            #expect((row["value"] as? String ?? "").contains("hummingbird-stall-demo"), "\(row)")
        }
        let rows = all.filter { $0["verdict"] as? String != "info" }
        #expect(rows.count >= 2, "\(all)")
        for row in rows {
            let data = row["data"] as? [String: Any]
            let with = data?["instructionsPerRequest"] as? Double ?? 0
            let without = data?["baselineInstructionsPerRequest"] as? Double ?? 0
            // A request through NIO's HTTP pipeline is tens of thousands of instructions (release) to
            // about a million (debug); the serving threads were found and counted in both runs.
            #expect(with > 10_000 && without > 10_000, "\(row)")
            #expect((data?["servingThreads"] as? Double ?? 0) >= 1, "\(row)")
            #expect((row["value"] as? String ?? "").contains("instructions per request"), "\(row)")
        }
    }

    @Test(
        "instruction-counts: a count over its baseline fails (exit 1, old vs new printed), one within passes, a bad baseline exits 2 naming the file",
        .enabled(if: callgrindUsable))
    func instructionCountsGate() throws {
        let directory = try ReportDirectory()
        let baseline = directory.url.appendingPathComponent("counts.json")
        let environment: [String: String?] = ["STALL_BENCH_TMPDIR": directory.path]
        // The real count, written by --update for the pool's enqueue hook only.
        let update = try StallReportCLI.run(
            ["instruction-counts", "--update", "--baseline", baseline.path, "--only", "poolJobEnqueue"],
            environment: environment, timeout: 300, executable: "stall-bench")
        try #require(update.status == 0, "\(update)")
        let written = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: baseline)) as? [String: Any])
        let measured = try #require((written["counts"] as? [String: Any])?["poolJobEnqueue"] as? Double)
        #expect(measured > 0, "\(written)")
        // The same build against it: within the tolerance.
        let same = try StallReportCLI.run(
            ["instruction-counts", "--baseline", baseline.path, "--only", "poolJobEnqueue"],
            environment: environment, timeout: 300, executable: "stall-bench")
        #expect(same.status == 0, "\(same)")
        // A baseline at half the count: the count grew 100 %, the check fails and says by how much.
        let half =
            #"{"about": "test", "build": "debug", "tolerance": 0.1, "counts": {"poolJobEnqueue": \#(measured / 2)}}"#
        try Data(half.utf8).write(to: baseline)
        let grew = try StallReportCLI.run(
            ["instruction-counts", "--baseline", baseline.path, "--only", "poolJobEnqueue"],
            environment: environment, timeout: 300, executable: "stall-bench")
        #expect(grew.status == 1, "\(grew)")
        #expect(
            grew.stdout.contains("poolJobEnqueue\t\(String(format: "%.1f", measured / 2))\t")
                && grew.stdout.contains("GREW"), "\(grew)")
        #expect(grew.stderr.contains("poolJobEnqueue grew more than 10 %"), "\(grew)")
        // Not a baseline: exit 2, the file named, nothing measured.
        try Data("{\"counts\": 3}".utf8).write(to: baseline)
        let bad = try StallReportCLI.run(
            ["instruction-counts", "--baseline", baseline.path], environment: environment, timeout: 60,
            executable: "stall-bench")
        #expect(bad.status == 2, "\(bad)")
        #expect(bad.stderr.contains(baseline.path) && bad.stderr.contains("not a baseline file"), "\(bad)")
    }

    @Test("--figure async-chains --quick: a chain's cost against its stack, from a pool task five calls deep")
    func asyncChains() throws {
        let rows = try Self.rows(try Self.runQuick(figure: "async-chains").json)
        #expect(rows.map { $0["figure"] as? String } == ["14"])
        let data = try #require(rows.first?["data"] as? [String: Any])
        #expect((data["callers"] as? Double ?? 0) >= 6, "\(data)")
    }

    @Test("--figure idle-per-loop --quick: each loop kind's hosts idle monitored and unmonitored, measured from /proc")
    func idlePerLoopQuick() throws {
        let rows = try Self.rows(try Self.runQuick(figure: "idle-per-loop").json)
        #expect(rows.map { $0["figure"] as? String } == ["15a", "15b", "15c", "15d", "15e", "15f"])
        // 15f, the yardstick: a thread that only wakes, found and measured beside the hosts.
        let reference = try #require(rows.last?["data"] as? [String: Any])
        #expect(reference["cpuNanosecondsPerSecond"] is Double, "\(reference)")
        // 15e's Hummingbird server is built by Scripts/bench in its own package: not here.
        for row in rows.prefix(4) {
            let data = try #require(row["data"] as? [String: Any])
            #expect(data["monitorWakeupsPerSecond"] is Double, "\(data)")
            #expect(data["monitorCPUNanosecondsPerSecond"] is Double, "\(data)")
            #expect(data["hostWakeupsPerSecondWithout"] is Double, "\(data)")
            #expect(
                (data["processCPUNanosecondsPerSecondWith"] as? Double ?? 0) > 0,
                "the monitored host used some CPU: \(data)")
        }
    }

    @Test(
        "--figure samples-under-load --quick: CPU and blocked stalls sampled quiet and with two CPU-bound processes per core"
    )
    func samplesUnderLoadQuick() throws {
        let rows = try Self.rows(try Self.runQuick(figure: "samples-under-load").json)
        #expect(rows.map { $0["figure"] as? String } == ["16a", "16b"])
        for row in rows {
            let data = try #require(row["data"] as? [String: Any])
            #expect(
                (data["loadedSamples"] as? Double ?? 0) > 0 && (data["quietSamples"] as? Double ?? 0) > 0, "\(data)")
        }
    }

    @Test("--figure observer-overhead --quick: 1a is judged against a bare observer and still shows the ratio to none")
    func observerOverheadBareBaseline() throws {
        let rows = try Self.rows(try Self.runQuick(figure: "observer-overhead").json)
        #expect(rows.map { $0["figure"] as? String } == ["1a", "1b", "1c"])
        let data = try #require(rows.first?["data"] as? [String: Any])
        #expect((data["ratioBareObserver"] as? Double ?? 0) > 0, "\(data)")
        #expect((data["ratio"] as? Double ?? 0) > 0, "\(data)")
        let value = try #require(rows.first?["value"] as? String)
        #expect(value.contains("against a bare observer"), "\(value)")
    }
}
