import Foundation
import StallMonitor
import StallReportKit
import Testing

@Suite("A thread sleeping in usleep", .serialized)
struct SleepingSyscallTests {
    @Test("usleep(600 ms) is not cut short and its report names the syscall")
    func usleepIsNotInterrupted() throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        let loop = try MonitoredLoopThread(name: "usleep-stall")
        defer { loop.stop() }
        let monitor = try loop.startMonitor(directory.configuration())
        defer { monitor.stop() }

        let measured = try loop.run {
            measureMilliseconds { StallingWork.sleepInUsleepForStallTest(microseconds: 600_000) }
        }
        #expect(measured >= 600, "usleep(600 ms) returned after \(measured) ms")
        #expect(monitor.waitForStalls(1), "\(monitor.statistics)")

        let reports = try directory.reports()
        try #require(reports.count == 1)
        let report = reports[0]
        #expect(durationCovers(report.durationMs, measured: measured), "\(report.durationMs) ms, measured \(measured) ms")
        #expect((report.sampling.skipped["sleepingSyscall"] ?? 0) > 0)
        // The span goes on for a moment after the sleep returns (the closure's return, the loop
        // going back to wait): a sample there finds the thread running or in another syscall.
        // The samples before that all find it asleep.
        let duringSleep = report.samples.filter { $0.offsetMs < measured - 10 }
        #expect(!duringSleep.isEmpty)
        #expect(duringSleep.allSatisfy { $0.kind == .syscall }, "\(report.samples.map { ($0.offsetMs, $0.kind) })")
        #expect(duringSleep.allSatisfy { $0.syscall == "clock_nanosleep" || $0.syscall == "nanosleep" }, "\(duringSleep.map(\.syscall))")
        #expect(duringSleep.allSatisfy { $0.frames.count == 1 && ($0.note ?? "").contains("not interrupted") })
        #expect(report.classification == .blocked)
    }

    @Test("with interruptSleepingSyscalls a sleeping thread's full stack is taken")
    func interruptingGivesFullStack() throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        let loop = try MonitoredLoopThread(name: "usleep-interrupt")
        defer { loop.stop() }
        var configuration = directory.configuration()
        configuration.interruptSleepingSyscalls = true
        let monitor = try loop.startMonitor(configuration)
        defer { monitor.stop() }

        // The signal may cut a sleep short: sleep again until 600 ms have passed.
        try loop.run { StallingWork.sleepInUsleepUntilElapsed(milliseconds: 600) }
        #expect(monitor.waitForStalls(1), "\(monitor.statistics)")

        let reports = try directory.reports()
        try #require(reports.count == 1)
        let report = reports[0]
        #expect(report.sampling.skipped["sleepingSyscall"] == nil)
        let stacks = report.samples.filter { $0.kind == .stack }
        #expect(!stacks.isEmpty)
        #expect(stacks.contains { $0.syscall == "clock_nanosleep" || $0.syscall == "nanosleep" })
        let symbols = report.representativeSymbols
        #expect(symbols.contains { $0.contains("sleepInUsleepUntilElapsed") }, "\(symbols)")
        #expect(symbols.contains { $0.contains("usleep") || $0.contains("nanosleep") }, "\(symbols)")
    }
}
