import Foundation
import StallMonitor
import StallReportKit
import Synchronization
import Testing

/// A loop whose passes never wait: a `ResidentLoopThread` runs one `CFRunLoopRunInMode` (it does
/// not return after a source) and its work source is signalled again after every item, so no pass
/// waits or leaves the run. Only the observed pass starts (`beforeTimers`) tell such passes apart:
/// a probe that split passes only at waits, wakes and runs would report this chain as one long
/// pass (a CPU stall instead of congestion).
@Suite("Passes that never wait", .serialized)
struct UnwaitedPassesTests {
    /// Runs `remaining` items of `microseconds` each, each queueing the next on the same thread.
    private static func chain(
        _ worker: ResidentLoopThread, remaining: Int, microseconds: UInt64,
        times: ChainTimes, done: @escaping @Sendable () -> Void
    ) {
        _ = worker.perform {
            let now = Kernel.monotonicNanoseconds()
            if times.start.load(ordering: .relaxed) == 0 { times.start.store(now, ordering: .releasing) }
            while Kernel.monotonicNanoseconds() < now + microseconds * 1_000 {}
            guard remaining > 1 else {
                times.end.store(Kernel.monotonicNanoseconds(), ordering: .releasing)
                return done()
            }
            chain(worker, remaining: remaining - 1, microseconds: microseconds, times: times, done: done)
        }
    }

    /// A report directory of the test's own and a resident loop thread named `name` whose monitor
    /// (threshold 100 ms) writes there, given a moment to settle; both are cleaned up after `body`.
    static func withUnwaitedWorker(
        _ name: String, label: String, _ body: (ReportDirectory, ResidentLoopThread, StallMonitor) throws -> Void
    ) throws {
        let directory = ReportDirectory(label)
        defer { directory.remove() }
        let worker = try ResidentLoopThread(
            name: name, monitor: directory.configuration(threshold: .milliseconds(100)))
        defer { worker.stop() }
        let monitor = try #require(worker.monitor)
        usleep(100_000)
        try body(directory, worker, monitor)
    }

    @Test("thousands of short passes in one run that never waits are one congestion stall, not one long pass")
    func unwaitedCongestionIsCongestion() throws {
        // 5,000 items of 200 µs: at least 1 s, ten times the threshold.
        try Self.withUnwaitedWorker("unwaited", label: "unwaited-passes") { directory, worker, monitor in
            let times = ChainTimes()
            let finished = DispatchSemaphore(value: 0)
            Self.chain(worker, remaining: 5_000, microseconds: 200, times: times) { finished.signal() }
            try #require(finished.wait(timeout: .now() + 60) == .success, "the chain did not finish")
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            usleep(300_000)
            monitor.flush()

            let reports = try directory.reports()
            try #require(
                reports.count == 1,
                "one stall: \(reports.map { ($0.durationMs, $0.loop.passes) }); \(monitor.statistics)")
            let report = reports[0]
            #expect(
                report.durationMs >= times.milliseconds - 1,
                "\(report.durationMs) ms for a chain of \(times.milliseconds) ms")
            // Split at waits and wakes only, the whole chain would be one pass (or a few).
            #expect(report.loop.passes >= 100, "\(report.loop.passes) passes")
            #expect(
                report.loop.longestPassMs * 4 <= report.durationMs,
                "longest pass \(report.loop.longestPassMs) ms of \(report.durationMs) ms")
            #expect(
                report.classification == .congestion,
                "\(report.classification), \(report.loop.passes) passes, longest \(report.loop.longestPassMs) ms")
        }
    }

    @Test("a single long item in a run that never waits is one long pass")
    func longItemIsOneLongPass() throws {
        try Self.withUnwaitedWorker("unwaited-long", label: "unwaited-long") { directory, worker, monitor in
            let spun = try worker.performAndWait {
                measureMilliseconds { StallingWork.spinOnCPUForStallTest(milliseconds: 400) }
            }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            usleep(300_000)
            monitor.flush()
            let reports = try directory.reports()
            try #require(reports.count == 1, "\(reports.map(\.durationMs)); \(monitor.statistics)")
            let report = reports[0]
            #expect(report.durationMs >= spun - 1)
            // A pass start is read from the coarse clock: up to one tick (≤ 10 ms) early.
            var tick = timespec()
            clock_getres(CLOCK_MONOTONIC_COARSE, &tick)
            let tickMs = Double(tick.tv_sec) * 1e3 + Double(tick.tv_nsec) / 1e6
            #expect(
                report.loop.longestPassMs >= spun - 1 - tickMs,
                "the item is one pass: \(report.loop.longestPassMs) ms of \(spun) ms")
            #expect(report.classification != .congestion)
        }
    }
}
