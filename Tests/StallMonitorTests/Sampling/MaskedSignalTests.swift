import Foundation
import Glibc
import StallMonitor
import StallReportKit
import Testing

@Suite("A thread that blocks the sampling signal", .serialized)
struct MaskedSignalTests {
    /// What the loop thread saw while it blocked the signal.
    struct Observed: Sendable {
        var milliseconds: Double
        var pendingBeforeUnblock: Bool
        var drained: Bool
    }

    @Test("a stall with the signal masked gives a report without a stack that says why, without hanging")
    func maskedSignalGivesStacklessReport() throws {
        try withMonitoredLoop("masked-signal") { directory, loop, monitor in
            let signal = monitor.signal

            var mask = sigset_t()
            sigemptyset(&mask)
            sigaddset(&mask, signal)
            let elapsed = try loop.run { [mask] in
                var blocked = mask
                pthread_sigmask(SIG_BLOCK, &blocked, nil)
                return measureMilliseconds { StallingWork.spinOnCPUForStallTest(milliseconds: 400) }
            }
            // The signal stays blocked until the stall has ended and its report is written: the whole
            // span, to the loop's next wait, is one with the signal blocked.
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            let observed = try loop.run { [mask] () -> Observed in
                // The monitor reads the mask and never sends a signal that would stay pending; should
                // one be pending anyway, take it here rather than let it run on unblocking.
                var unblock = mask
                var pending = sigset_t()
                sigpending(&pending)
                let wasPending = sigismember(&pending, signal) == 1
                var drained = false
                if wasPending {
                    var zero = timespec(tv_sec: 0, tv_nsec: 0)
                    drained = sigtimedwait(&unblock, nil, &zero) == signal
                }
                pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
                return Observed(milliseconds: elapsed, pendingBeforeUnblock: wasPending, drained: drained)
            }
            #expect(!observed.pendingBeforeUnblock)

            let report = try directory.onlyReport()
            #expect(
                durationCovers(report.durationMs, measured: observed.milliseconds),
                "\(report.durationMs) ms, measured \(observed.milliseconds) ms")
            #expect(report.representativeStack.isEmpty)
            // While the signal is blocked nothing is sent: no sample has a stack, each says why.
            #expect(!report.samples.isEmpty)
            #expect(report.samples.allSatisfy { $0.kind == .none && $0.frames.isEmpty })
            #expect(
                report.samples.allSatisfy { ($0.note ?? "").contains("blocks the sampling signal") },
                "\(report.samples.map(\.note))")
            #expect(report.sampling.skipped["signalBlocked"] == report.sampling.attempted, "\(report.sampling)")
            #expect(report.sampling.taken == 0)
            #expect(report.sampling.timedOut == 0)
            #expect(report.classification == .cpu)

            // Unblocked again, the thread is sampled normally.
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 350) }
            #expect(monitor.waitForStalls(2), "\(monitor.statistics)")
            let second = try directory.reports().first { $0.id != report.id }
            let stack = try #require(second).representativeSymbols
            #expect(stack.contains { $0.contains("spinOnCPUForStallTest") }, "\(stack)")
        }
    }
}

@Suite("The sampling signal on a thread that inherited a blocked mask", .serialized)
struct InheritedMaskTests {
    @Test("start unblocks the sampling signal on the monitored thread, so its stalls get stacks")
    func startUnblocksTheSignal() throws {
        try withLoopThread("inherited-mask") { directory, loop in
            // Block every real-time signal, as a thread created from a dispatch worker does.
            try loop.run {
                var mask = sigset_t()
                sigemptyset(&mask)
                for signal in realTimeSignalMin...realTimeSignalMax { sigaddset(&mask, signal) }
                pthread_sigmask(SIG_BLOCK, &mask, nil)
            }
            let monitor = try loop.startMonitor(directory.configuration())
            defer { monitor.stop() }
            let blocked = try loop.run { () -> Bool in
                var current = sigset_t()
                pthread_sigmask(SIG_BLOCK, nil, &current)
                return sigismember(&current, monitor.signal) == 1
            }
            #expect(!blocked)

            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 320) }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            let report = try #require(try directory.reports().first)
            #expect(
                report.sampling.skipped["signalBlocked"] == nil,
                "\(report.samples.map { ($0.offsetMs, $0.kind, $0.note ?? "") }) duration \(report.durationMs)")
            #expect(report.representativeSymbols.contains { $0.contains("spinOnCPUForStallTest") })
        }
    }
}
