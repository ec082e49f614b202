import Foundation
import StallReportModel
import Testing

/// A real program with `async main` (no main RunLoop ever runs): the monitor never watches nothing
/// silently, and watches the MainActor, which Dispatch worker threads run, with `loop: .mainActor`.
@Suite("async main host", .serialized)
struct AsyncMainHostTests {
    @Test("started for the main run loop from a worker thread, the monitor refuses with a clear error")
    func refusesFromAWorker() throws {
        let run = try StallReportCLI.run(["refuse"], timeout: 60, executable: "async-main-host")
        #expect(run.status == 3, "\(run)")
        #expect(run.stderr.contains("never runs RunLoop.main"), "\(run.stderr)")
        #expect(run.stderr.contains("async main"))
        #expect(run.stderr.contains("loop: .mainActor"), "the error points to the loop to watch: \(run.stderr)")
        #expect(!run.stdout.contains("started"))
    }

    @Test("started on the main thread before it parks, the monitor warns that its loop never ran")
    func warnsWhenTheLoopNeverRuns() throws {
        let run = try StallReportCLI.run(["silent"], timeout: 60, executable: "async-main-host")
        #expect(run.status == 0, "\(run)")
        let warnings = run.stderr.split(separator: "\n").filter {
            $0.contains("warning") && $0.contains("loopNotRunning")
        }
        #expect(warnings.count == 1, "\(run.stderr)")
        #expect(run.stdout.contains("hasRun [false]"), "\(run.stdout)")
    }

    /// The third argument idles the program first for that many seconds: libdispatch retires idle
    /// workers after 5 s, so the stall then runs on a worker the monitor never armed (found from
    /// the queue's state, its stack from /proc/self/maps, sampled with SIGPROF).
    @Test(
        "a @MainActor function that stalls 400 ms (CPU, sleep) gives one report naming it, with the worker thread that ran it",
        arguments: [
            ("cpu", "spinOnMainActorForTest", 0), ("block", "sleepOnMainActorForTest", 0),
            ("cpu", "spinOnMainActorForTest", 6),
            ("block", "sleepOnMainActorForTest", 3),
        ])
    func mainActorStall(mode: String, function: String, idleFirst: Int) throws {
        try withScratchFolder("async-main-host") { directory in
            let run = try StallReportCLI.run(
                [mode, directory.path, "\(idleFirst)"], timeout: 120, executable: "async-main-host")
            try #require(run.status == 0, "\(run)")
            // "stalled thread <tid> for <ms> ms": the stall's own clock, on the thread that ran it.
            let words = try #require(
                run.stdout.split(separator: "\n").first { $0.hasPrefix("stalled thread") }?
                    .split(separator: " "), "\(run.stdout)")
            let thread = String(words[2])
            let measured = try #require(Double(words[4]))
            #expect(run.stdout.contains("watched [\"mainActor hasRun=true\"]"), "\(run.stdout)")
            // SIGPROF (free in this host) samples workers that never armed; stop restores it.
            #expect(run.stdout.contains("sampling signal SIGPROF, default again after stop: true"), "\(run.stdout)")

            let reports = try Self.reports(in: directory)
            try #require(reports.count == 1, "\(reports.map(\.durationMs)) \(run)")
            let report = reports[0]
            #expect(report.loop.kind == "mainActor")
            #expect("\(report.loop.threadID)" == thread, "the report names the worker that ran the job")
            #expect(!report.loop.isMainThread)
            #expect(report.representativeFunction.contains(function), "\(report.representativeFunction)")
            #expect(report.samples.contains { $0.kind == .stack }, "samples carry the worker's stack")
            // The stall ran in the `async main` task: its stack samples carry the task's async callers,
            // down to the task's root.
            let chains = report.samples.filter { $0.kind == .stack }.compactMap(\.asyncCallers)
            if chains.isEmpty, idleFirst > 0, AsyncCallChainTests.underSanitizer {
                // Under a sanitizer a worker nobody armed is not found in the maps by glibc's thread
                // layout (as the pool probe's workers are not): the report says why it has no chain.
                #expect(
                    report.sampling.asyncCallersNote?.contains("thread pointer is not known") == true,
                    "\(report.sampling)")
            } else {
                #expect(!chains.isEmpty, "\(report.sampling.asyncCallersNote ?? "no note")")
                #expect(
                    report.representativeAsyncCallers.flatMap(\.last).flatMap { report.frames[$0].symbol }?.hasPrefix(
                        "complete") == true,
                    "\(report.representativeAsyncCallers.map { $0.map { report.frames[$0].symbol ?? "?" } } ?? [])")
            }
            // The end is exact (the probe's token runs right after the job); the start is dated to
            // half a poll interval (20 ms) when the watchdog keeps its pace: generous bounds.
            #expect(
                report.durationMs >= measured - 60 && report.durationMs <= measured + 300,
                "report \(report.durationMs) ms, function \(measured) ms")
        }
    }

    @Test(
        "an idle MainActor lets the watchdog sleep where the shim's dispatch_async pass-through won the link; else it is looked at every interval"
    )
    func idleMainActor() throws {
        try withScratchFolder("async-main-host") { directory in
            let run = try StallReportCLI.run(
                ["idle", directory.path, "6"], timeout: 120, executable: "async-main-host")
            try #require(run.status == 0, "\(run)")
            // "idle 6.0 s: <n> watchdog wake-ups/s, <µs> µs of watchdog CPU per second"
            let line = try #require(run.stdout.split(separator: "\n").first { $0.hasPrefix("idle ") }, "\(run.stdout)")
            let words = line.split(separator: " ")
            let perSecond = try #require(Double(words[3]), "\(line)")
            if run.stdout.contains("main-queue enqueues wake the watchdog: true") {
                // Asleep: one look every 2 s, and the looks (every 20 ms for 100 ms) after the
                // measuring task's own hop back at the end: about 1.5/s in 6 s (50/s if polled).
                #expect(perSecond <= 2.5, "\(line)")
            } else {
                // ThreadSanitizer's dispatch_async interceptors win the link: looked at every 20 ms.
                #expect(run.stdout.contains("main-queue enqueues wake the watchdog: false"), "\(run.stdout)")
                #expect(perSecond >= 10, "\(line)")
            }
            #expect(run.stdout.contains("stalls 0"), "\(run.stdout)")
        }
    }

    @Test("thousands of short MainActor jobs and a burst of main-queue blocks give no report")
    func shortJobs() throws {
        try Self.expectNoReport(mode: "short", printing: ["ran 5200 short MainActor jobs", "stalls 0 reports 0"])
    }

    @Test("MainActor work declared with expectLongWork is not reported")
    func expectedLongWork() throws {
        try Self.expectNoReport(
            mode: "expected", printing: ["expected long work on thread", "stalls 0 reports 0 expected 1"])
    }

    /// Runs the host in `mode`: it must exit 0, print each of `lines`, and leave no report.
    static func expectNoReport(
        mode: String, printing lines: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try withScratchFolder("async-main-host") { directory in
            let run = try StallReportCLI.run([mode, directory.path], timeout: 120, executable: "async-main-host")
            try #require(run.status == 0, "\(run)", sourceLocation: sourceLocation)
            for line in lines { #expect(run.stdout.contains(line), "\(run.stdout)", sourceLocation: sourceLocation) }
            #expect(try reports(in: directory).isEmpty, sourceLocation: sourceLocation)
        }
    }

    /// The stall reports in `directory`, in file-name order.
    static func reports(in directory: URL) throws -> [StallReport] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasPrefix("stall-") && $0.hasSuffix(".json") }
            .sorted()
        return try names.map { try StallReport.read(from: directory.appendingPathComponent($0)) }
    }
}
