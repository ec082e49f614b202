import Foundation
import StallReportModel
import Testing

/// A real `async main` program whose tasks hold Swift concurrency workers (pool-stall-host),
/// watched with `loop: .concurrencyPool`: each job that holds a worker past the threshold gives
/// one report naming the worker and the function, judged against the program's own clock and
/// thread ids; a pool held on every worker is said to be starved; short jobs give nothing.
@Suite("concurrency pool host", .serialized)
struct PoolStallHostTests {
    /// One stall the host caused: "stalled thread <tid> (<name>) for <ms> ms in <function>".
    struct Caused {
        var thread: String
        var milliseconds: Double
        var function: String
    }

    /// Runs the host in `mode` with a report directory of its own (removed after its reports are read).
    static func run(_ mode: String) throws -> (run: StallReportCLI.Run, caused: [Caused], reports: [StallReport]) {
        return try withScratchFolder("pool-stall-host") { directory in
            let run = try StallReportCLI.run([mode, directory.path], timeout: 120, executable: "pool-stall-host")
            let caused = run.stdout.split(separator: "\n").filter { $0.hasPrefix("stalled thread") }.compactMap {
                line -> Caused? in
                let words = line.split(separator: " ")
                guard words.count >= 9, let ms = Double(words[5]) else { return nil }
                return Caused(thread: String(words[2]), milliseconds: ms, function: String(words[8]))
            }
            return (run, caused, try AsyncMainHostTests.reports(in: directory))
        }
    }

    @Test(
        "a task that holds a pool worker 400 ms gives exactly one report naming the worker and the function",
        arguments: [
            ("detached", "sleepInDetachedTaskForTest", StallClassification.blocked),
            ("task", "spinInUnstructuredTaskForTest", .cpu),
            ("group", "waitOnSemaphoreInGroupChildForTest", .blocked),
            ("asynclet", "readPipeInAsyncLetForTest", .blocked),
            ("actor", "spinInActorMethodForTest", .cpu),
        ])
    func jobThatHoldsAWorker(mode: String, function: String, classification: StallClassification) throws {
        let (run, caused, reports) = try Self.run(mode)
        try #require(run.status == 0, "\(run)")
        let stall = try #require(caused.first, "\(run.stdout)")
        #expect(stall.function.hasPrefix(function), "\(stall.function)")
        try #require(reports.count == 1, "\(reports.map(\.durationMs)) \(run)")
        let report = reports[0]
        #expect(report.loop.kind == "concurrencyPool")
        #expect("\(report.loop.threadID)" == stall.thread, "the report names the worker that ran the job")
        #expect(!report.loop.isMainThread)
        #expect(report.classification == classification, "\(report.classification)")
        Self.expect(report, names: function, lasting: stall.milliseconds)
        #expect(report.samples.contains { $0.kind == .stack }, "samples carry the worker's stack")
    }

    /// The report's stack names `function` (a prefix of its name) and its duration is the host's:
    /// start and end are each dated to half a poll interval (10 ms) when the watchdog keeps its
    /// pace; the bounds are generous for a loaded machine and the sanitizers.
    static func expect(
        _ report: StallReport, names function: String, lasting milliseconds: Double,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(
            report.representativeFunction.contains(function)
                || report.representativeStack.contains { report.frames[$0].symbol?.contains(function) == true },
            "\(report.representativeFunction) vs \(function)", sourceLocation: sourceLocation)
        #expect(
            report.durationMs >= milliseconds - 60 && report.durationMs <= milliseconds + 300,
            "report \(report.durationMs) ms, function \(milliseconds) ms", sourceLocation: sourceLocation)
    }

    @Test(
        "an idle pool lets the watchdog sleep, and a job that starts after the idle time is still reported with its duration"
    )
    func stallAfterIdle() throws {
        let (run, caused, reports) = try Self.run("after-idle")
        try #require(run.status == 0, "\(run)")
        let idleLine = try #require(
            run.stdout.split(separator: "\n").first { $0.hasPrefix("idle wake-ups") }, "\(run.stdout)")
        let wakeups = try #require(Int(idleLine.split(separator: " ")[2]), "\(idleLine)")
        // Looked at every 10 ms this would be about 200; asleep, one look every 2 s and the few
        // looks after the sleeping task's own wake-up at the end.
        #expect(wakeups <= 12, "\(idleLine)")
        try #require(caused.count == 2, "\(run.stdout)")
        try #require(reports.count == 2, "\(reports.map(\.durationMs)) \(run)")
        let byThread = reports.sorted { $0.startedAt < $1.startedAt }
        for (report, stall) in zip(byThread, caused) {
            Self.expect(report, names: String(stall.function.prefix { $0 != "(" }), lasting: stall.milliseconds)
        }
    }

    @Test(
        "the pass-through enqueue hook is set only while a monitor watches the pool (SwiftNIO's takeover needs the slot empty)"
    )
    func hookLifetime() throws {
        let (run, _, _) = try Self.run("hook")
        try #require(run.status == 0, "\(run)")
        #expect(run.stdout.contains("hook before nil watching set stopped nil"), "\(run.stdout)")
    }

    @Test(
        "as many tasks as the pool has workers, each blocking 600 ms: the pool is said to be starved, and each job is reported"
    )
    func starvedPool() throws {
        let (run, caused, reports) = try Self.run("starve")
        try #require(run.status == 0, "\(run)")
        let warnings = run.stderr.split(separator: "\n").filter { $0.contains("poolStarved") }
        #expect(warnings.count >= 1, "\(run.stderr)")
        #expect(run.stdout.contains("starvations 1") || run.stdout.contains("starvations 2"), "\(run.stdout)")
        for stall in caused {
            #expect(
                warnings.contains { $0.contains("thread \(stall.thread) ") },
                "the warning names worker \(stall.thread): \(warnings)")
        }
        #expect(reports.allSatisfy { $0.loop.kind == "concurrencyPool" })
        let jobs = reports.filter { $0.starvation == nil }
        #expect(
            Set(caused.map(\.thread)).isSubset(of: Set(jobs.map { "\($0.loop.threadID)" })),
            "a report per held job: \(jobs.map(\.loop.threadID)) vs \(caused.map(\.thread))")
        // One report of the starvation itself, with every held worker's stack.
        let starved = reports.filter { $0.starvation != nil }
        try #require(starved.count == 1, "\(reports.map { ($0.loop.threadName, $0.durationMs) })")
        let report = starved[0]
        let starvation = try #require(report.starvation)
        #expect(report.durationMs == starvation.waitedMs)
        #expect(starvation.waitedMs >= 250 && starvation.waitedMs <= 600 + 300, "\(starvation.waitedMs)")
        #expect(report.classification == .blocked)
        for stall in caused {
            let worker = try #require(
                starvation.workers.first { "\($0.threadID)" == stall.thread }, "\(starvation.workers)")
            #expect((worker.heldMs ?? 0) >= 200, "\(worker)")
            let sample = try #require(worker.sample.map { report.samples[$0] })
            #expect(
                sample.frames.contains { report.frames[$0].symbol?.contains("sleepWhileStarvingPoolForTest") == true },
                "\(sample)")
        }
    }

    @Test("25,000 short jobs spread over the pool for 2 s give no report and no starvation")
    func shortJobsAreNotStalls() throws {
        let (run, _, reports) = try Self.run("short")
        try #require(run.status == 0, "\(run)")
        #expect(run.stdout.contains("ran "), "\(run.stdout)")
        #expect(reports.isEmpty, "\(reports.map { "\($0.durationMs) ms \($0.representativeFunction)" })")
        #expect(run.stdout.contains("starvations 0"), "\(run.stdout)")
    }

    @Test("400 ms of work in a task declared with expectLongWork is not reported")
    func expectedLongWork() throws {
        let (run, caused, reports) = try Self.run("expected")
        try #require(run.status == 0, "\(run)")
        #expect(caused.count == 1, "\(run.stdout)")
        #expect(reports.isEmpty, "\(reports.map { "\($0.durationMs) ms \($0.representativeFunction)" })")
    }

    @Test(
        "one monitor of the MainActor and the pool reports a MainActor stall and a pool stall, each with its own loop kind and worker"
    )
    func mainActorAndPool() throws {
        let (run, caused, reports) = try Self.run("both")
        try #require(run.status == 0, "\(run)")
        try #require(caused.count == 2, "\(run.stdout)")
        try #require(reports.count == 2, "\(reports.map { ($0.loop.kind, $0.durationMs, $0.representativeFunction) })")
        let mainActor = try #require(reports.first { $0.loop.kind == "mainActor" })
        let pool = try #require(reports.first { $0.loop.kind == "concurrencyPool" })
        #expect("\(mainActor.loop.threadID)" == caused[0].thread)
        #expect("\(pool.loop.threadID)" == caused[1].thread)
        #expect(
            mainActor.representativeStack.contains {
                mainActor.frames[$0].symbol?.contains("spinOnMainActorForTest") == true
            },
            "\(mainActor.representativeFunction)")
        #expect(
            pool.representativeStack.contains { pool.frames[$0].symbol?.contains("sleepInDetachedTaskForTest") == true }
        )
    }
}
