import Foundation
import StallMonitor
import StallReportKit
import Testing

@Suite("Starting, stopping and running several monitors", .serialized)
struct RestartAndConcurrencyTests {
    @Test("start, stop, start again on the same loop: each monitor reports its own stall")
    func startStopStart() throws {
        try withReportDirectories("first", "second") { first, second in
            let loop = try MonitoredLoopThread(name: "restart")
            defer { loop.stop() }

            let monitor = try loop.startMonitor(first.configuration())
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 320) }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            monitor.stop()

            // Stopped: a stall now is not seen by anyone.
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 320) }
            usleep(200_000)
            #expect(monitor.statistics.stallsDetected == 1)
            #expect(first.reportFiles().count == 1)

            let again = try loop.startMonitor(second.configuration())
            defer { again.stop() }
            // Long enough for a stack even when the new monitor's first unwinding (a new libdw
            // session) is slow on a loaded machine.
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 600) }
            #expect(again.waitForStalls(1), "\(again.statistics)")
            let reports = try second.reports()
            try #require(reports.count == 1)
            #expect(
                reports[0].representativeSymbols.contains { $0.contains("spinOnCPUForStallTest") },
                "\(reports[0].representativeSymbols) \(reports[0].sampling) \(reports[0].samples.map { ($0.kind, $0.frames.count, $0.truncated ?? false) })"
            )
            #expect(reports[0].loop.threadID == Int(loop.tid))
            #expect(first.reportFiles().count == 1)
        }
    }

    @Test("two monitors on two threads at once each report their own thread's stall")
    func twoMonitorsAtOnce() throws {
        try withReportDirectories("first", "second") { firstDirectory, secondDirectory in
            let firstLoop = try MonitoredLoopThread(name: "first-loop")
            defer { firstLoop.stop() }
            let secondLoop = try MonitoredLoopThread(name: "second-loop")
            defer { secondLoop.stop() }
            let first = try firstLoop.startMonitor(firstDirectory.configuration())
            defer { first.stop() }
            let second = try secondLoop.startMonitor(secondDirectory.configuration())
            defer { second.stop() }
            #expect(first.signal == second.signal)

            // Overlapping stalls.
            let a = firstLoop.perform { StallingWork.spinOnCPUForStallTest(milliseconds: 400) }
            let b = secondLoop.perform { StallingWork.spinOnSecondLoopForStallTest(milliseconds: 400) }
            try a.wait()
            try b.wait()
            #expect(first.waitForStalls(1), "\(first.statistics)")
            #expect(second.waitForStalls(1), "\(second.statistics)")
            usleep(200_000)

            let firstReports = try firstDirectory.reports()
            let secondReports = try secondDirectory.reports()
            try #require(firstReports.count == 1)
            try #require(secondReports.count == 1)
            #expect(firstReports[0].loop.threadID == Int(firstLoop.tid))
            #expect(secondReports[0].loop.threadID == Int(secondLoop.tid))
            #expect(firstReports[0].loop.threadName == "first-loop")
            #expect(secondReports[0].loop.threadName == "second-loop")
            let firstStack = firstReports[0].representativeSymbols
            let secondStack = secondReports[0].representativeSymbols
            #expect(firstStack.contains { $0.contains("spinOnCPUForStallTest") }, "\(firstStack)")
            #expect(!firstStack.contains { $0.contains("spinOnSecondLoopForStallTest") })
            #expect(secondStack.contains { $0.contains("spinOnSecondLoopForStallTest") }, "\(secondStack)")
            #expect(!secondStack.contains { $0.contains("spinOnCPUForStallTest") })
            #expect(first.statistics.stallsDetected == 1)
            #expect(second.statistics.stallsDetected == 1)

            // Stopping one leaves the other working (the signal handler stays while one runs).
            first.stop()
            try secondLoop.run { StallingWork.spinOnSecondLoopForStallTest(milliseconds: 320) }
            #expect(second.waitForStalls(2), "\(second.statistics)")
            let latest = try secondDirectory.reports()
            try #require(latest.count == 2)
            #expect(latest.allSatisfy { $0.sampling.taken > 0 })
        }
    }
}
