import Foundation
import StallReportModel
import Testing

/// The async call chains of real stalls on the concurrency pool (pool-stall-host `chains`),
/// judged against the program's own record: each async function notes its name in a task-local
/// trail before it awaits, and the leaf prints the trail of its task. The report's logical stack
/// (the job's frames, then the async callers) must name the same functions in the same order.
@Suite("async call chains", .serialized)
struct AsyncCallChainTests {
    /// One stall the host caused, with its ground truth (outermost first).
    struct Truth {
        var shape: String
        var thread: String
        var names: [String]
        var outer: [String]
    }

    static func truths(_ stdout: String) -> [Truth] {
        stdout.split(separator: "\n").filter { $0.hasPrefix("chain ") }.compactMap { line -> Truth? in
            let halves = line.components(separatedBy: " | outer")
            let words = halves[0].split(separator: " ")
            guard words.count >= 5, words[4] == "truth" else { return nil }
            let names = words.dropFirst(5).filter { $0 != ">" }.map(String.init)
            let outer = halves.count > 1 ? halves[1].split(separator: " ").filter { $0 != ">" }.map(String.init) : []
            return Truth(shape: String(words[1]), thread: String(words[3]), names: names, outer: outer)
        }
    }

    /// The test functions a logical stack names, outermost first, each once per run of frames
    /// (a function's closures and partial functions name it too).
    static func chainFunctions(_ report: StallReport) -> [String] {
        var names: [String] = []
        for index in report.representativeLogicalStack.reversed() where report.frames.indices.contains(index) {
            guard let symbol = report.frames[index].symbol,
                let range = symbol.range(of: #"chain[A-Z][A-Za-z0-9]*"#, options: .regularExpression)
            else { continue }
            let name = String(symbol[range])
            if names.last != name { names.append(name) }
        }
        return names
    }

    @Test(
        "direct await, awaits nested five deep, async let, a task-group child and an actor hop: the report's async callers are the program's own"
    )
    func chainsMatchTheGroundTruth() throws {
        try Self.checkChains(executable: "pool-stall-host")
    }

    /// The same in a release build of the host (optimized partial functions), when one is given:
    /// `swift build -c release --product pool-stall-host` and
    /// `STALLMONITOR_RELEASE_POOL_HOST=$PWD/.build/release/pool-stall-host`.
    @Test(
        "the same five shapes in a release build of the host",
        .enabled(if: ProcessInfo.processInfo.environment["STALLMONITOR_RELEASE_POOL_HOST"] != nil))
    func chainsMatchTheGroundTruthInARelease() throws {
        try Self.checkChains(
            executable: try #require(ProcessInfo.processInfo.environment["STALLMONITOR_RELEASE_POOL_HOST"]))
    }

    static func checkChains(executable: String) throws {
        try withScratchFolder("async-chains") { directory in
            let run = try StallReportCLI.run(["chains", directory.path], timeout: 180, executable: executable)
            try #require(run.status == 0, "\(run)")
            let truths = Self.truths(run.stdout)
            #expect(truths.map(\.shape) == ["direct", "nested", "asynclet", "group", "actor"], "\(run.stdout)")
            let reports = try AsyncMainHostTests.reports(in: directory)
            for truth in truths {
                let leaf = try #require(truth.names.last)
                let matching = reports.filter { report in
                    "\(report.loop.threadID)" == truth.thread
                        && report.representativeStack.contains { report.frames[$0].symbol?.contains(leaf) == true }
                }
                let report = try #require(
                    matching.first, "a report of the \(truth.shape) stall: \(reports.map(\.representativeFunction))")
                let callers = try #require(
                    report.representativeAsyncCallers,
                    "\(truth.shape): the report carries async callers (\(report.sampling.asyncCallersNote ?? "no note"))"
                )
                // The chain ends at the task's root: the runtime's completion function.
                #expect(
                    callers.last.flatMap { report.frames[$0].symbol }?.hasPrefix("completeTask") == true,
                    "\(truth.shape)")
                let found = Self.chainFunctions(report)
                // A child task's root is a closure written in its parent's function, named after it.
                let expected = truth.outer.isEmpty ? truth.names : [truth.outer.last!] + truth.names
                #expect(
                    found == expected || found == truth.names, "\(truth.shape): report \(found), program \(expected)")
                // A sample whose chain could not be confirmed (the task's words changed while they were
                // read, or the running frame's context was not found) carries none rather than a guess;
                // most carry it, and under a sanitizer's instrumented frames at least one does.
                let stacks = report.samples.filter { $0.kind == .stack }
                let chained = stacks.filter { $0.asyncCallers != nil }.count
                #expect(
                    chained > 0 && (chained * 2 >= stacks.count || ProductionSanitizerCheck.active),
                    "\(truth.shape): \(chained) of \(stacks.count) stack samples of the job carry its chain")
            }
            #expect(Set(reports.map(\.fingerprint)).count == reports.count, "each shape has a fingerprint of its own")
        }
    }

    @Test("stallreport show prints the async callers under the representative stack")
    func showPrintsTheChain() throws {
        try withScratchFolder("async-chains") { directory in
            let run = try StallReportCLI.run(["chains", directory.path], timeout: 180, executable: "pool-stall-host")
            try #require(run.status == 0, "\(run)")
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
                $0.hasPrefix("stall-")
            }.sorted()
            let nested = try #require(
                names.map { directory.appendingPathComponent($0) }.first { url in
                    (try? String(contentsOf: url, encoding: .utf8))?.contains("chainNestedLeaf") == true
                })
            let show = try StallReportCLI.run(["show", "--color", "never", nested.path])
            try #require(show.status == 0, "\(show)")
            let text = show.stdout
            let stack = try #require(text.range(of: "Representative stack"))
            let callers = try #require(text.range(of: "Async callers"), "\(text)")
            #expect(stack.lowerBound < callers.lowerBound)
            let after = text[callers.upperBound...]
            let positions = ["chainNested5()", "chainNested4()", "chainNested3()", "chainNested2()", "chainNested1()"]
                .compactMap { after.range(of: $0)?.lowerBound }
            #expect(positions.count == 5 && positions == positions.sorted(), "innermost caller first: \(text)")
            let folded = try StallReportCLI.run(["export", "--format", "folded", nested.path, "-o", "-"])
            try #require(folded.status == 0, "\(folded)")
            #expect(
                folded.stdout.contains("chainNested1") && folded.stdout.contains("chainNestedLeaf"),
                "folded stacks are logical: \(folded.stdout.prefix(2000))")
        }
    }

    /// The test functions a Swift runtime backtrace names, leaf first collapsed like
    /// ``chainFunctions(_:)`` (then reversed: outermost first): its physical frames of the crashed
    /// thread and its `[async]` frames.
    static func backtraceFunctions(_ output: String) -> [String] {
        // `Thread 6 "oot.default-qos" crashed:` (not `*** Program crashed: …`).
        guard let crashed = output.range(of: "\" crashed:") else { return [] }
        var names: [String] = []
        for line in output[crashed.upperBound...].split(separator: "\n") {
            if line.hasPrefix("Registers") || line.hasPrefix("Thread ") { break }
            guard let range = line.range(of: #"chain[A-Z][A-Za-z0-9]*"#, options: .regularExpression) else { continue }
            let name = String(line[range])
            if names.last != name { names.append(name) }
        }
        return names.reversed()
    }

    /// Whether this test bundle runs under a sanitizer, whose runtime owns the crash signals: the
    /// crashed host's backtracer then never finishes.
    static var underSanitizer: Bool {
        let process = dlopen(nil, RTLD_NOW)
        return dlsym(process, "__tsan_init") != nil || dlsym(process, "__asan_init") != nil
    }

    @Test(
        "the same chains as the Swift runtime's own backtracer names at a crash at the same point",
        .disabled(if: underSanitizer, "the sanitizers own the crash signals"),
        arguments: ["direct", "nested", "asynclet", "group", "actor"])
    func chainsMatchTheRuntimeBacktracer(shape: String) throws {
        try withScratchFolder("async-chains") { directory in
            let crash = try StallReportCLI.run(
                ["chains", directory.path, shape],
                environment: [
                    "POOL_STALL_HOST_CRASH": "1",
                    "SWIFT_BACKTRACE": "enable=yes,interactive=no,color=no,threads=crashed,sanitize=no",
                ],
                timeout: 120, executable: "pool-stall-host")
            let reference = Self.backtraceFunctions(crash.stdout + crash.stderr)
            // The backtracer works only where the runtime supports it: nothing to compare with elsewhere.
            guard crash.status != 0, !reference.isEmpty else { return }
            let stalled = try StallReportCLI.run(
                ["chains", directory.path, shape], timeout: 180, executable: "pool-stall-host")
            try #require(stalled.status == 0, "\(stalled)")
            let reports = try AsyncMainHostTests.reports(in: directory)
            try #require(reports.count == 1, "\(reports.map(\.representativeFunction))")
            #expect(Self.chainFunctions(reports[0]) == reference, "report vs the runtime's backtrace:\n\(crash.stderr)")
        }
    }
}

/// Whether this test process runs with a sanitizer runtime (it defines `__tsan_init` or `__asan_init`).
enum ProductionSanitizerCheck {
    static var active: Bool {
        let process = dlopen(nil, RTLD_NOW)
        return dlsym(process, "__tsan_init") != nil || dlsym(process, "__asan_init") != nil
    }
}
