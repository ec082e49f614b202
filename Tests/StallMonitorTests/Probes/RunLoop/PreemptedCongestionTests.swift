import CoreFoundation
import Foundation
import Glibc
import StallMonitor
import StallReportKit
import Synchronization
import Testing

/// A congested loop on a busy machine, for real: the loop thread and a spinning thread are pinned
/// to one CPU, and an observer yields the CPU at every `beforeWaiting`, so the spinning thread
/// runs between two passes for longer than the re-entry grace. The loop never goes idle, so it
/// must be one congestion stall, not hundreds of spans too short to report.
@Suite("Congestion on a CPU shared with a busy thread", .serialized)
struct PreemptedCongestionTests {
    /// What the congested chain saw.
    struct Chain: Sendable {
        var milliseconds: Double
        var longPauses: Int
    }

    @Test("a loop preempted between passes for longer than the grace has one congestion stall covering the whole chain")
    func preemptedCongestionIsOneStall() throws {
        let cpu = try #require(CPUPinning.firstAllowedCPU(), "no CPU in this thread's affinity mask")
        try withMonitoredLoop("preempted-cong", label: "preempted-congestion") { directory, loop, monitor in
            let hog = CPUHog(cpu: cpu)
            defer { hog.stop() }
            let yielding = try loop.run { () -> YieldObserver? in
                guard CPUPinning.pinCallingThread(to: cpu) else { return nil }
                return YieldObserver(countingPausesLongerThan: 200_000)
            }
            let observer = try #require(yielding, "could not pin the loop thread to CPU \(cpu)")
            defer { _ = try? loop.run { observer.remove() } }

            let times = ChainTimes()
            let finished = DispatchSemaphore(value: 0)
            // Started by a timer on the loop itself: queueing a block from this thread can make the
            // loop's first pass wait for the run loop's lock (a sleep) while this thread holds it.
            try loop.run {
                let start = CFRunLoopTimerCreateWithHandler(nil, CFAbsoluteTimeGetCurrent() + 0.05, 0, 0, 0) { _ in
                    CongestedChain.run(remaining: 1_500, microseconds: 200, times: times) { finished.signal() }
                }
                CFRunLoopAddTimer(CFRunLoopGetCurrent(), start, kCFRunLoopDefaultMode)
            }
            try #require(finished.wait(timeout: .now() + 60) == .success, "the congested chain did not finish")
            let chain = Chain(
                milliseconds: times.milliseconds, longPauses: observer.longPauses.count.load(ordering: .relaxed))
            hog.stop()
            #expect(
                chain.longPauses >= 10,
                "the observer's yields should pause the loop for more than the grace: \(chain.longPauses)")
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            usleep(300_000)
            monitor.flush()

            let reports = try directory.reports()
            try #require(
                reports.count == 1, "one stall, not fragments: \(reports.map(\.durationMs)); \(monitor.statistics)")
            let report = reports[0]
            #expect(
                report.durationMs >= chain.milliseconds - 1,
                "\(report.durationMs) ms for a chain of \(chain.milliseconds) ms")
            #expect(
                report.classification == .congestion,
                "\(report.classification), \(report.loop.passes) passes, longest \(report.loop.longestPassMs) ms")
        }
    }
}
