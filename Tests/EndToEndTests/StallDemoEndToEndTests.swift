import Foundation
import StallReportKit
import Testing

/// Runs the real `stall-demo` binary (a host app whose main RunLoop stalls in known ways while
/// StallMonitor watches) and checks every report it writes, then feeds them to `stallreport`.
@Suite("stall-demo end to end", .serialized)
struct StallDemoEndToEndTests {
    /// The demo's stalls in the order it runs them, with what their reports must say.
    struct Expectation {
        var scenario: String
        var classification: StallClassification
        var function: String
        var minimumMs: Double
        var maximumMs: Double
    }

    static let expectations: [Expectation] = [
        .init(scenario: "cpu-spin-300", classification: .cpu, function: "spinOnCPU", minimumMs: 300, maximumMs: 380),
        .init(
            scenario: "mutex-wait", classification: .blocked, function: "waitForLockHeldByWorker", minimumMs: 490,
            maximumMs: 600),
        .init(
            scenario: "usleep", classification: .blocked, function: "clock_nanosleep", minimumMs: 400, maximumMs: 480),
        .init(
            scenario: "deep-recursion", classification: .cpu, function: "recurseThenSpin", minimumMs: 400,
            maximumMs: 500),
        // 600 tasks of 1 ms: about 600 ms. On a loaded machine a preemption between two passes
        // can exceed the 200 µs re-entry grace and split the span; the part reported must still
        // be a congestion stall.
        .init(
            scenario: "congestion", classification: .congestion, function: "runCongestedTask", minimumMs: 250,
            maximumMs: 3_000),
        .init(
            scenario: "cpu-spin-1200", classification: .cpu, function: "spinOnCPU", minimumMs: 1_200, maximumMs: 1_300),
    ]

    @Test("every scenario gives one report with the right stack and class; short work gives none")
    func demoReports() throws {
        // The run the other end-to-end tests read too (same arguments: --threshold-ms 250).
        let shared = try VizDemo.run()
        let directory = shared.directory
        let run = shared.process
        if let keep = ProcessInfo.processInfo.environment["STALL_DEMO_KEEP_REPORTS"] {
            try? FileManager.default.removeItem(atPath: keep)
            try FileManager.default.copyItem(atPath: directory.path, toPath: keep)
        }
        #expect(run.status == 0, "\(run)")

        let allFiles = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".json") }.sorted()
        #expect(!allFiles.contains { $0.hasPrefix(".") }, "temporary files left behind")
        let reports = try allFiles.map { try StallReport.read(from: directory.appendingPathComponent($0)) }
        #expect(
            !reports.contains { report in
                report.samples.contains {
                    $0.frames.contains { report.frames[$0].symbol?.contains("shortWorkBelowThreshold") == true }
                }
            },
            "the 100 ms work below the threshold must not be reported")
        // One report per scenario, in order. On a loaded machine (or under a sanitizer) a
        // preemption between two passes of the congested loop can exceed the re-entry grace and
        // split that span: more congestion reports right after the first are accepted, nothing else.
        var files: [String] = []
        var index = 0
        for expectation in Self.expectations {
            try #require(index < reports.count, "no report for \(expectation.scenario): \(allFiles)\n\(run)")
            files.append(allFiles[index])
            index += 1
            while expectation.scenario == "congestion", index < reports.count,
                reports[index].classification == .congestion
            {
                index += 1
            }
        }
        try #require(index == reports.count, "one report per stall scenario expected; got \(allFiles)\n\(run)")
        let wrote = run.stdoutLines.filter { $0.hasPrefix("wrote ") }
        #expect(wrote.count == allFiles.count, "the demo prints where it wrote each report")

        var startTimes: [Date] = []
        for (file, expectation) in zip(files, Self.expectations) {
            let report = try StallReport.read(from: directory.appendingPathComponent(file))
            startTimes.append(report.startedAt)
            #expect(report.status == .ended)
            #expect(
                report.classification == expectation.classification, "\(expectation.scenario): \(report.classification)"
            )
            #expect(
                report.durationMs >= expectation.minimumMs && report.durationMs <= expectation.maximumMs,
                "\(expectation.scenario): \(report.durationMs) ms")
            #expect(report.loop.isMainThread && report.loop.threadID == report.process.pid)
            let names = report.samples.flatMap { $0.frames.compactMap { report.frames[$0].symbol } }
            #expect(
                names.contains { $0.contains(expectation.function) },
                "\(expectation.scenario): no \(expectation.function) in the samples")
            #expect(report.images.contains { $0.isMainExecutable && $0.buildID != nil })
            #expect(wrote.contains { $0.contains(file) })
        }
        #expect(startTimes == startTimes.sorted(), "file names sort by time")

        let usleep = try StallReport.read(from: directory.appendingPathComponent(files[2]))
        // Asleep in the kernel: unwound from a copy of its stack, never interrupted, down to the
        // demo's function that slept.
        let asleep = usleep.samples.filter { $0.kind == .stack && $0.syscall == "clock_nanosleep" }
        #expect(!asleep.isEmpty)
        #expect(asleep.allSatisfy { $0.interrupted == false && $0.unwinder == "libdw" })
        #expect(usleep.representativeStack.contains { usleep.frames[$0].symbol?.contains("sleepWithUsleep") == true })
        let recursion = try StallReport.read(from: directory.appendingPathComponent(files[3]))
        #expect(recursion.samples.contains { $0.frames.count >= 200 }, "the 200-frame recursion is captured whole")
        let mutex = try StallReport.read(from: directory.appendingPathComponent(files[1]))
        let mutexStack = mutex.representativeStack.compactMap { mutex.frames[$0].symbol }
        #expect(
            mutexStack.contains { $0.contains("pthread_mutex_lock") || $0.contains("lll_lock_wait") }, "\(mutexStack)")

        try SchemaValidation.validate(directory: directory)

        let summary = try StallReportCLI.run(["summarize", "--format", "json", directory.path])
        #expect(summary.status == 0, "\(summary)")
        let json = try summary.jsonObject()
        let totals = json?["totals"] as? [String: Any]
        #expect((totals?["stalls"] as? Int) == reports.count, "\(summary.stdout.prefix(600))")
        #expect((totals?["problems"] as? Int) == 0)
    }
}
