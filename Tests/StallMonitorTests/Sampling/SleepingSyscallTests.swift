import Foundation
import StallMonitor
import StallReportKit
import Testing

@Suite("A thread sleeping in usleep", .serialized)
struct SleepingSyscallTests {
    @Test("usleep(600 ms) is not cut short and its report names the syscall")
    func usleepIsNotInterrupted() throws {
        try withMonitoredLoop("usleep-stall") { directory, loop, monitor in
            let measured = try loop.run {
                measureMilliseconds { StallingWork.sleepInUsleepForStallTest(microseconds: 600_000) }
            }
            #expect(measured >= 600, "usleep(600 ms) returned after \(measured) ms")
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")

            let report = try directory.onlyReport()
            #expect(
                durationCovers(report.durationMs, measured: measured),
                "\(report.durationMs) ms, measured \(measured) ms")
            // The span goes on for a moment after the sleep returns (the closure's return, the loop
            // going back to wait). The samples before that all find it asleep, and unwind it from a
            // copy of its stack without interrupting it.
            let duringSleep = report.samples.filter { $0.offsetMs < measured - 10 }
            #expect(!duringSleep.isEmpty)
            #expect(
                duringSleep.allSatisfy { $0.kind == .stack && $0.interrupted == false && $0.unwinder == "libdw" },
                "\(report.samples.map { ($0.offsetMs, $0.kind, $0.note ?? "") })")
            #expect(
                duringSleep.allSatisfy { $0.syscall == "clock_nanosleep" || $0.syscall == "nanosleep" },
                "\(duringSleep.map(\.syscall))")
            #expect(report.classification == .blocked)
            let symbols = report.representativeSymbols
            #expect(symbols.contains { $0.contains("sleepInUsleepForStallTest") }, "\(symbols)")
            #expect(symbols.contains { $0.contains("nanosleep") }, "\(symbols)")
        }
    }

    @Test(
        "with libunwind in the handler, a spinning thread is unwound in its handler and a sleeping one still from a copy"
    )
    func libunwindInHandlerMode() throws {
        try withMonitoredLoop("libunwind-mode", configure: { $0.unwinding = .libunwindInHandler }) {
            directory, loop, monitor in
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 600) }
            try loop.waitUntilSleeping()
            let slept = try loop.run {
                measureMilliseconds { StallingWork.sleepInUsleepForStallTest(microseconds: 600_000) }
            }
            #expect(slept >= 600)
            #expect(monitor.waitForStalls(2), "\(monitor.statistics)")

            let reports = try directory.reports()
            try #require(reports.count == 2)
            let spin = try #require(
                reports.first { $0.representativeSymbols.contains { $0.contains("spinOnCPUForStallTest") } })
            #expect(spin.sampling.unwinder == "libunwind")
            let interrupted = spin.samples.filter { $0.kind == .stack }
            #expect(!interrupted.isEmpty)
            #expect(interrupted.allSatisfy { $0.unwinder == "libunwind" && $0.interrupted == true })
            let sleep = try #require(
                reports.first { $0.representativeSymbols.contains { $0.contains("sleepInUsleepForStallTest") } })
            #expect(sleep.samples.contains { $0.kind == .stack && $0.unwinder == "libdw" && $0.interrupted == false })
        }
    }
}
