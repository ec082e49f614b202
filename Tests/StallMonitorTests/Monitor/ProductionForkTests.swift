import Foundation
import Glibc
import StallMonitor
import StallReportKit
import Testing

/// fork() and process spawning in a host that runs a monitor: children stay sane (no watchdog,
/// the inherited handler is harmless) and the parent's stall is still reported.
@Suite("Production: fork and process spawning", .serialized)
struct ProductionForkTests {
    @Test(
        "fork() during a sampled stall: a child that gets the sampling signal, or calls stop(), exits 0; the stall is reported"
    )
    func forkDuringStall() throws {
        try withMonitoredLoop("fork") { directory, loop, monitor in
            let signal = monitor.signal

            let stall = loop.perform { StallingWork.spinOnCPUForStallTest(milliseconds: 900) }
            #expect(waitUntil(timeout: .seconds(3)) { monitor.statistics.samplesTaken > 0 }, "sampling did not start")
            var statuses: [Int32?] = []
            for childCallsStop in [false, true] {
                let pid = fork()
                if pid == 0 {
                    // The child: only the forking thread exists. The inherited handler must be harmless
                    // (nothing waits for it here); stop() must return without joining absent threads.
                    raise(signal)
                    if childCallsStop { monitor.stop() }
                    _exit(0)
                }
                try #require(pid > 0, "fork failed: \(errno)")
                statuses.append(waitForChild(pid))
            }
            #expect(
                statuses.allSatisfy { $0.map { exitedNormally($0, code: 0) } ?? false }, "child statuses: \(statuses)")
            try stall.wait()
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            let report = try #require(try directory.reports().first)
            #expect(report.representativeSymbols.contains { $0.contains("spinOnCPUForStallTest") })
            #expect(report.sampling.taken > 0)
            // The parent's monitor is unaffected: another stall is reported too.
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 300) }
            #expect(monitor.waitForStalls(2), "\(monitor.statistics)")
        }
    }

    @Test(
        "20 Foundation Process spawns of /bin/true from another thread during a sampled stall all exit 0; the stall is reported"
    )
    func processSpawnsDuringStall() throws {
        try withMonitoredLoop("spawn-outside") { directory, loop, monitor in
            let stall = loop.perform { measureMilliseconds { StallingWork.spinOnCPUForStallTest(milliseconds: 1_500) } }
            #expect(waitUntil(timeout: .seconds(3)) { monitor.statistics.samplesTaken > 0 }, "sampling did not start")
            var statuses: [Int32] = []
            for _ in 0..<20 {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/bin/true")
                try process.run()
                let exited = waitUntil(timeout: .seconds(5)) { !process.isRunning }
                if !exited { process.terminate() }
                statuses.append(exited ? process.terminationStatus : -1)
            }
            let sampledBefore = monitor.statistics.samplesTaken
            let measured = try stall.wait()
            #expect(statuses == Array(repeating: 0, count: 20), "\(statuses)")
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            let report = try #require(try directory.reports().first)
            #expect(
                durationCovers(report.durationMs, measured: measured),
                "\(report.durationMs) ms, measured \(measured) ms")
            #expect(report.sampling.taken > 20 && sampledBefore > 0, "\(report.sampling)")
            #expect(report.sampling.attempted == report.sampling.accountedFor, "\(report.sampling)")
        }
    }

    @Test(
        "the monitored thread itself posix_spawns /bin/true again and again for 600 ms while sampled: all exit 0, reported, nothing hangs"
    )
    func posixSpawnOnTheMonitoredThread() throws {
        try withMonitoredLoop("spawn-inside") { directory, loop, monitor in
            let result = try loop.run { ProductionWork.spawnTrueRepeatedly(milliseconds: 600) }
            #expect(result.spawned >= 5 && result.succeeded == result.spawned, "\(result)")
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            let report = try #require(try directory.reports().first)
            #expect(report.sampling.attempted == report.sampling.accountedFor, "\(report.sampling)")
            #expect(report.sampling.attempted > 0)
        }
    }
}
