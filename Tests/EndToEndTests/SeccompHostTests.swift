import Foundation
import StallReportModel
import Testing

/// The project's hosts where a seccomp filter makes the system calls the monitor relies on fail,
/// as a hardened container's profile does (`seccomp-run`, which installs the filter and then
/// executes the host). Denied `process_vm_readv`: the monitor reads its own memory through
/// `/proc/self/mem` and loses nothing (blocked stalls keep their stacks, the pool and the
/// MainActor are watched). Denied `tgkill`: running threads get no stack, each such sample says
/// why, and the process's owner is told once. Never a crash, a hang, or a stack that is not there.
@Suite(
    "hosts under a seccomp filter", .serialized,
    .enabled(if: SeccompFilter.works, "this machine cannot install a seccomp filter"))
struct SeccompHostTests {
    /// Runs the built product `host` with `arguments` where `denied` (comma-separated) fail with `errno`.
    static func run(
        _ host: String, _ arguments: [String], denying denied: String, errno: String = "EPERM"
    ) throws -> StallReportCLI.Run {
        let program = try StallReportCLI.binary(named: host).path
        return try StallReportCLI.run(
            [denied, errno, "--", program] + arguments, timeout: 120, executable: "seccomp-run")
    }

    /// The log lines that say a system call was refused.
    static func denialLines(_ run: StallReportCLI.Run) -> [Substring] {
        run.stderr.split(separator: "\n").filter { $0.contains("stallmonitor.problem=syscallDenied") }
    }

    /// A report's samples that carry a stack, and the rest (each of which must say why it has none).
    static func expectHonestSamples(_ report: StallReport, sourceLocation: SourceLocation = #_sourceLocation) {
        for sample in report.samples where sample.kind != .stack {
            #expect(sample.frames.isEmpty, "a sample without a stack claims frames", sourceLocation: sourceLocation)
        }
        let skipped = report.sampling.skipped.values.reduce(0, +)
        #expect(
            report.sampling.attempted == report.sampling.taken + report.sampling.timedOut + skipped,
            sourceLocation: sourceLocation)
    }

    /// A CPU stall while the sampling signal is denied: the samples it could not be sent for
    /// outnumber the ones taken, and a sample that has a stack was copied from `/proc` while the
    /// thread slept for a moment (a page fault, the allocator's mmap or lock), never interrupted
    /// and never marked running (the state is read after the syscall file the copy is checked
    /// against); so a representative stack, if any, is one of those.
    static func expectNoRunningThreadSampled(_ report: StallReport, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            report.sampling.skipped["sendFailed", default: 0] > report.sampling.taken, "\(report.sampling)",
            sourceLocation: sourceLocation)
        let stacks = report.samples.filter { $0.kind == .stack }
        #expect(
            stacks.allSatisfy { $0.interrupted == false && $0.threadState != "R" },
            "\(stacks.map { ($0.threadState, $0.interrupted) })",
            sourceLocation: sourceLocation)
        #expect(report.representativeStack.isEmpty || !stacks.isEmpty, sourceLocation: sourceLocation)
    }

    /// A blocked stall's samples carry stacks, and none was lost to memory that could not be read.
    static func expectStacksRead(_ report: StallReport, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(report.sampling.taken > 0, "\(report.sampling)", sourceLocation: sourceLocation)
        for reason in ["unwindFailed", "threadUnreadable"] {
            #expect(
                report.sampling.skipped[reason, default: 0] == 0, "\(report.sampling)", sourceLocation: sourceLocation)
        }
        #expect(
            !report.samples.contains { $0.note?.contains("could not be read") == true }, sourceLocation: sourceLocation)
    }

    @Test(
        "process_vm_readv denied: a pool job asleep 400 ms still gives its whole stack, read through /proc/self/mem",
        arguments: ["EPERM", "ENOSYS"])
    func poolWithoutProcessVMReadv(errno: String) throws {
        try withScratchFolder("seccomp-pool") { directory in
            let run = try Self.run(
                "pool-stall-host", ["detached", directory.path], denying: "process_vm_readv", errno: errno)
            try #require(run.status == 0, "the pool is still watched: \(run)")
            let denials = Self.denialLines(run)
            #expect(denials.count == 1, "said once: \(run.stderr)")
            #expect(
                denials.first?.contains("process_vm_readv failed") == true && denials.first?.contains(errno) == true,
                "\(denials)")
            #expect(denials.first?.contains("/proc/self/mem instead") == true, "\(denials)")
            #expect(run.stdout.contains("\"syscallDenied=1\""), "counted once in statistics.errors: \(run.stdout)")
            let reports = try AsyncMainHostTests.reports(in: directory)
            try #require(reports.count == 1, "\(run)")
            let report = reports[0]
            #expect(report.loop.kind == "concurrencyPool")
            #expect(report.classification == .blocked)
            #expect(
                report.representativeFunction.contains("sleepInDetachedTaskForTest"), "\(report.representativeFunction)"
            )
            Self.expectStacksRead(report)
            #expect(report.samples.contains { !($0.asyncCallers ?? []).isEmpty }, "async callers are read too")
            Self.expectHonestSamples(report)
        }
    }

    @Test(
        "tgkill denied: a RunLoop's CPU stall is reported with no stack of the running thread, each sample saying why; a blocked one keeps its stack"
    )
    func runLoopWithoutTgkill() throws {
        try withScratchFolder("seccomp-runloop") { directory in
            let run = try Self.run(
                "stall-demo", ["--output", directory.path, "--only", "cpu-spin-300,usleep"], denying: "tgkill")
            // The demo logs only above info and exits 3 when the monitor counted an error, naming the last.
            try #require(run.status == 3, "\(run)")
            #expect(
                run.stderr.contains(
                    "errors [\"syscallDenied\": 1]; last: system call refused: "
                        + "tgkill failed: Operation not permitted (EPERM; denied by a seccomp profile?)"),
                "\(run.stderr)")
            #expect(run.stderr.contains("running threads get no stack"), "\(run.stderr)")
            let reports = try AsyncMainHostTests.reports(in: directory)
            try #require(reports.count == 2, "\(run)")
            let cpu = try #require(reports.first { $0.classification == .cpu }, "\(reports.map(\.classification))")
            Self.expectNoRunningThreadSampled(cpu)
            let unsent = cpu.samples.filter { $0.note?.contains("the sampling signal could not be sent") == true }
            #expect(
                !unsent.isEmpty
                    && unsent.allSatisfy {
                        $0.note?.contains("(tgkill: Operation not permitted, EPERM; denied by a seccomp profile?)")
                            == true
                    },
                "each sample the signal was not sent for says why: \(unsent.map(\.note))")
            let blocked = try #require(reports.first { $0.classification == .blocked })
            #expect(blocked.representativeFunction.contains("sleepWithUsleep"), "\(blocked.representativeFunction)")
            Self.expectStacksRead(blocked)
            for report in reports { Self.expectHonestSamples(report) }
        }
    }

    @Test(
        "both denied, MainActor: a blocked stall keeps its stack, a CPU stall has none of the running thread and says why",
        arguments: [("block", StallClassification.blocked, "sleepOnMainActorForTest"), ("cpu", .cpu, "")])
    func mainActorWithoutEither(mode: String, classification: StallClassification, function: String) throws {
        try withScratchFolder("seccomp-main-actor") { directory in
            let run = try Self.run("async-main-host", [mode, directory.path, "0"], denying: "process_vm_readv,tgkill")
            try #require(run.status == 0, "\(run)")
            #expect(run.stdout.contains("watched [\"mainActor hasRun=true\"]"), "\(run.stdout)")
            let reports = try AsyncMainHostTests.reports(in: directory)
            try #require(reports.count == 1, "\(run)")
            let report = reports[0]
            #expect(report.loop.kind == "mainActor")
            #expect(report.classification == classification)
            if classification == .blocked {
                #expect(report.representativeFunction.contains(function), "\(report.representativeFunction)")
                Self.expectStacksRead(report)
            } else {
                Self.expectNoRunningThreadSampled(report)
            }
            Self.expectHonestSamples(report)
            // One line per cause: process_vm_readv (the task words are read at once), tgkill when a
            // running thread was to be sampled (always in a CPU stall, perhaps as a blocked one began).
            let denials = Self.denialLines(run)
            #expect(denials.filter { $0.contains("process_vm_readv failed") }.count == 1, "\(run.stderr)")
            let tgkill = denials.filter { $0.contains("tgkill failed") }.count
            #expect(classification == .cpu ? tgkill == 1 : tgkill <= 1, "\(denials)")
            #expect(denials.count == 1 + tgkill, "\(denials)")
        }
    }

    @Test(
        "both denied, NIO event loops: a handler asleep 400 ms keeps its stack, one spinning 400 ms has none of the running thread"
    )
    func nioWithoutEither() throws {
        try withScratchFolder("seccomp-nio") { directory in
            let server = try NIOStallDemoServer.start(
                reports: directory.appendingPathComponent("reports"),
                portFile: directory.appendingPathComponent("port"),
                deniedCalls: "process_vm_readv,tgkill")
            _ = try server.curl(["/sleep?ms=400"])
            _ = try server.curl(["/cpu?ms=400"])
            let run = try server.stop()
            #expect(run.status == 0, "\(run)")
            let reports = try AsyncMainHostTests.reports(in: directory.appendingPathComponent("reports"))
            try #require(reports.count == 2, "\(run)")
            let blocked = try #require(
                reports.first { $0.classification == .blocked }, "\(reports.map(\.classification))")
            #expect(blocked.representativeFunction.contains("sleepOnLoop"), "\(blocked.representativeFunction)")
            Self.expectStacksRead(blocked)
            let cpu = try #require(reports.first { $0.classification == .cpu })
            Self.expectNoRunningThreadSampled(cpu)
            for report in reports { Self.expectHonestSamples(report) }
        }
    }
}

/// Whether `seccomp-run` can install a filter on this machine (a sandbox may refuse `PR_SET_SECCOMP`).
enum SeccompFilter {
    static let works: Bool = {
        guard
            let run = try? StallReportCLI.run(
                ["process_vm_readv", "--", "/bin/true"], timeout: 30, executable: "seccomp-run")
        else {
            return false
        }
        return run.status == 0
    }()
}
