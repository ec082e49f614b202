import Foundation
import StallReportKit
import Testing

/// The monitor in hostile conditions, with the real `stall-demo` as a child process: killed during
/// a stall, stopped with SIGSTOP, traced, declaring expected long work.
@Suite("stall-demo in production conditions", .serialized)
struct StallDemoProductionTests {
    /// Starts `stall-demo` with `arguments`; stdout and stderr go to files in `directory`.
    static func launch(
        _ arguments: [String], directory: URL, executable: URL? = nil, prefix: [String] = []
    ) throws -> Process {
        let process = Process()
        if let executable {
            process.executableURL = executable
            process.arguments = prefix + [try StallReportCLI.binary(named: "stall-demo").path] + arguments
        } else {
            process.executableURL = try StallReportCLI.binary(named: "stall-demo")
            process.arguments = arguments
        }
        _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("out.txt").path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: directory.appendingPathComponent("out.txt"))
        process.standardError = process.standardOutput
        try process.run()
        return process
    }

    static func reports(in directory: URL) throws -> [StallReport] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasPrefix("stall-") && $0.hasSuffix(".json") }.sorted()
            .map { try StallReport.read(from: directory.appendingPathComponent($0)) }
    }

    /// The first stall report (matching `condition`) to appear in `directory` within `seconds`, or
    /// nil. Files that do not decode (yet) are passed over.
    static func firstReport(
        in directory: URL, seconds: Double, where condition: (StallReport) -> Bool = { _ in true }
    ) -> StallReport? {
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
                .filter { $0.hasPrefix("stall-") && $0.hasSuffix(".json") }.sorted()
            for name in names {
                if let report = try? StallReport.read(from: directory.appendingPathComponent(name)), condition(report) {
                    return report
                }
            }
            usleep(10_000)
        } while Date() < deadline
        return nil
    }

    static func waitForExit(_ process: Process, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            process.terminate()
            return false
        }
        process.waitUntilExit()
        return true
    }

    @Test("a process killed with SIGKILL during a 3 s stall leaves a valid report that counts as fatal")
    func killedDuringStall() throws {
        let directory = try ReportDirectory()
        let reports = directory.url.appendingPathComponent("reports")
        let process = try Self.launch(["--output", reports.path, "--only", "cpu-spin-3000"], directory: directory.url)
        // Kill it 1.5 s into the stall. When the stall begins depends on how fast the child starts
        // (slow under a sanitizer on a cold machine), so the stall's own inProgress report says
        // when it began.
        let announced = Self.firstReport(in: reports, seconds: 30)
        if let announced {
            let killAt = announced.startedAt.addingTimeInterval(1.5).timeIntervalSinceNow
            if killAt > 0 { usleep(UInt32(killAt * 1_000_000)) }
        }
        kill(process.processIdentifier, SIGKILL)
        try #require(announced != nil, "no inProgress report within 30 s of the launch")
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)

        let found = try Self.reports(in: reports)
        try #require(found.count == 1, "the in-progress report must be on disk")
        let report = found[0]
        #expect(report.status == .inProgress)
        #expect(report.durationMs >= 250 && report.durationMs < 1_600, "\(report.durationMs)")
        #expect(report.samples.contains { $0.kind == .stack })
        #expect(StaleStatus.effectiveStatus(of: report) == .fatal)
        try SchemaValidation.validate(directory: reports)

        let summary = try StallReportCLI.run(["summarize", "--format", "json", reports.path])
        #expect(summary.status == 0, "\(summary)")
        let totals = (try summary.jsonObject())?["totals"] as? [String: Any]
        #expect((totals?["fatal"] as? Int) == 1, "\(summary.stdout.prefix(800))")

        // The next monitor to start in that directory rewrites the stale report as fatal.
        let next = try StallReportCLI.run(
            ["--output", reports.path, "--only", "short-work"], timeout: 60, executable: "stall-demo")
        #expect(next.status == 0, "\(next)")
        #expect(try Self.reports(in: reports).map(\.status) == [.fatal])
        let sessions = try FileManager.default.contentsOfDirectory(atPath: reports.path).filter {
            $0.hasSuffix(".session")
        }
        #expect(sessions.count == 2, "one session record per process: \(sessions)")
    }

    @Test("a process killed with SIGKILL after idling without a stall is counted as monitored up to its last heartbeat")
    func killedAfterIdling() throws {
        let directory = try ReportDirectory()
        let reports = directory.url.appendingPathComponent("reports")
        let process = try Self.launch(
            ["--output", reports.path, "--only", "idle", "--park-seconds", "60", "--session-heartbeat-seconds", "1"],
            directory: directory.url)
        // The record is written at start; the process then idles (the watchdog parked, no stall).
        func sessionFiles() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: reports.path)) ?? []).filter {
                $0.hasSuffix(".session")
            }
        }
        let deadline = Date().addingTimeInterval(30)
        while sessionFiles().isEmpty && Date() < deadline && process.isRunning { usleep(10_000) }
        let appeared = Date()
        try #require(sessionFiles().count == 1, "no session record within 30 s of the launch")
        usleep(4_500_000)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let lived = Date().timeIntervalSince(appeared) * 1_000
        #expect(process.terminationReason == .uncaughtSignal)

        let data = try Data(contentsOf: reports.appendingPathComponent(sessionFiles()[0]))
        let record = try SessionRecord.decode(from: data)
        #expect(!record.cleanStop)
        #expect(record.stalls == 0)
        // Heartbeats every second for 4.5 s: at least 2.5 s known to be monitored (the writer
        // may be late on a loaded machine), never more than the process lived.
        #expect(
            record.effectiveMonitoredMs >= 2_500, "monitored \(record.effectiveMonitoredMs) ms of about \(lived) ms")
        #expect(
            record.effectiveMonitoredMs <= lived + 1_000,
            "monitored \(record.effectiveMonitoredMs) ms of about \(lived) ms")
        #expect(record.monitoredMs >= 2_500)
        #expect(try Self.reports(in: reports).isEmpty)

        let summary = try StallReportCLI.run(["summarize", "--format", "json", reports.path])
        #expect(summary.status == 0, "\(summary)")
    }

    @Test("time the process spends stopped with SIGSTOP is not a stall")
    func stoppedProcess() throws {
        let directory = try ReportDirectory()
        let reports = directory.url.appendingPathComponent("reports")
        let process = try Self.launch(
            ["--output", reports.path, "--only", "short-work-loop"], directory: directory.url)
        for _ in 0..<3 {
            usleep(700_000)
            kill(process.processIdentifier, SIGSTOP)
            usleep(800_000)
            kill(process.processIdentifier, SIGCONT)
        }
        #expect(Self.waitForExit(process, seconds: 30))
        #expect(process.terminationStatus == 0)
        let durations = try Self.reports(in: reports).map(\.durationMs)
        #expect(durations == [], "stopped time was reported as stalls")
    }

    @Test(
        "stalls are not reported while a tracer is attached, unless asked",
        .enabled(if: StallDemoProductionTests.canTrace))
    func traced() throws {
        let directory = try ReportDirectory()
        let quiet = directory.url.appendingPathComponent("quiet")
        let traced = try Self.launch(
            ["--output", quiet.path, "--only", "cpu-spin-300"], directory: directory.url,
            executable: URL(fileURLWithPath: "/usr/bin/env"), prefix: ["strace", "-f", "-o", "/dev/null"])
        #expect(Self.waitForExit(traced, seconds: 60))
        #expect(try Self.reports(in: quiet).isEmpty)

        let loud = directory.url.appendingPathComponent("loud")
        let reporting = try Self.launch(
            ["--output", loud.path, "--only", "cpu-spin-300", "--report-while-debugged"], directory: directory.url,
            executable: URL(fileURLWithPath: "/usr/bin/env"), prefix: ["strace", "-f", "-o", "/dev/null"])
        #expect(Self.waitForExit(reporting, seconds: 60))
        #expect(try Self.reports(in: loud).count == 1)
    }

    @Test("work declared with expectLongWork is not reported")
    func expectedLongWork() throws {
        let directory = try ReportDirectory()
        let run = try StallReportCLI.run(
            ["--output", directory.path, "--only", "expected-long-work,cpu-spin-300"], timeout: 60,
            executable: "stall-demo")
        #expect(run.status == 0, "\(run)")
        let found = try Self.reports(in: directory.url)
        #expect(found.count == 1, "only the undeclared 300 ms spin: \(found.map(\.durationMs))")
        #expect(found.first.map { $0.durationMs < 500 } == true)
    }

    @Test("reports written without in-process symbolication get the same names and fingerprint offline")
    func deferredSymbolication() throws {
        let directory = try ReportDirectory()
        let named = directory.url.appendingPathComponent("named")
        let deferred = directory.url.appendingPathComponent("deferred")
        let symbolicated = directory.url.appendingPathComponent("symbolicated")
        for (output, extra) in [(named, [String]()), (deferred, ["--defer-symbolication"])] {
            let run = try StallReportCLI.run(
                ["--output", output.path, "--only", "cpu-spin-300"] + extra, timeout: 60, executable: "stall-demo")
            #expect(run.status == 0, "\(run)")
        }
        let inProcess = try #require(try Self.reports(in: named).first)
        let raw = try #require(try Self.reports(in: deferred).first)
        #expect(raw.symbolication.symbolicator == "none")
        #if arch(x86_64)
        // Without names in process the stacks come from libunwind's remote unwinder (no file mapped).
        #expect(raw.sampling.unwinder == "libunwind-remote")
        #endif
        #expect(raw.frames.allSatisfy { $0.symbol == nil })
        #expect(raw.fingerprint != inProcess.fingerprint)

        let run = try StallReportCLI.run(["symbolicate", deferred.path, "--output", symbolicated.path])
        #expect(run.status == 0, "\(run)")
        let offline = try #require(try Self.reports(in: symbolicated).first)
        #expect(offline.fingerprint == inProcess.fingerprint, "offline names give the in-process fingerprint")
        #expect(offline.symbolication.symbolicator == "llvm-symbolizer")
        let appNames = { (report: StallReport) in
            report.representativeStack.compactMap { report.frames[$0].inApp ? report.frames[$0].symbol : nil }.filter {
                !Fingerprint.isIgnored($0)
            }
        }
        #expect(appNames(offline).prefix(3) == appNames(inProcess).prefix(3))
    }

    /// Whether `strace` exists and may trace here (containers often forbid ptrace).
    static let canTrace: Bool = {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["strace", "-o", "/dev/null", "true"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }()
}
