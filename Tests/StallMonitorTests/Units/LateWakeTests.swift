import Glibc
import Testing

@testable import StallMonitor

/// The watchdog woke far later than it asked. If the monitored thread ran on a CPU meanwhile, the
/// process was not stopped (the watchdog only waited for a CPU): the stall is real. If it did not
/// run, the time is taken for a stopped process (SIGSTOP, a debugger) and is not a stall. The
/// thread's CPU clock is replaced here to make each case exactly; `StallDemoProductionTests`
/// stops a real process.
@Suite("Late watchdog wake-ups", .serialized)
struct LateWakeTests {
    private static let ms = ThreadWatchHarness.ms

    /// A thread CPU clock the test moves by hand.
    private final class SimulatedCPU: @unchecked Sendable {
        var nanos: Int64 = 7 * Int64(LateWakeTests.ms)
    }

    /// A 600 ms span; the watchdog sleeps at 1,140 ms and wakes 400 ms late at 1,550 ms, while the
    /// thread used `cpuDuringSleep` of CPU (nil: its CPU clock cannot be read). Returns the
    /// harness after the span ended at 1,600 ms.
    private static func lateWake(cpuDuringSleep: Int64?) -> ThreadWatchHarness {
        let harness = ThreadWatchHarness()
        let cpu = SimulatedCPU()
        if cpuDuringSleep == nil { cpu.nanos = -1 }
        harness.watch.threadCPUNanos = { _ in cpu.nanos }
        harness.tracker.record(64, at: 1_000 * ms)                 // afterWaiting: the span opens
        _ = harness.watch.step(now: 1_130 * ms)                    // past the lead: tracking begins
        harness.watch.noteWatchdogSleeps(now: 1_140 * ms)           // asks to wake at 1,150 ms
        if let cpuDuringSleep { cpu.nanos += cpuDuringSleep }
        harness.watch.noteProcessStopped(lateness: 400 * ms, now: 1_550 * ms)
        _ = harness.watch.step(now: 1_550 * ms)
        harness.tracker.record(32, at: 1_600 * ms)                 // beforeWaiting
        _ = harness.watch.step(now: 1_601 * ms)
        return harness
    }

    @Test("the thread ran the whole time the watchdog overslept: a 600 ms stall, nothing subtracted")
    func threadRan() throws {
        let harness = Self.lateWake(cpuDuringSleep: 410 * Int64(Self.ms))
        let stall = try #require(harness.endedStalls.first, "\(harness.emitted)")
        #expect(stall.end - stall.spanStart == 600 * Self.ms)
        #expect(stall.stoppedNanos == 0)
        #expect(harness.counters.discardedProcessStopped.load(ordering: .relaxed) == 0)
    }

    @Test("the thread ran half of it: only what it did not run counts as stopped")
    func threadRanHalf() throws {
        let harness = Self.lateWake(cpuDuringSleep: 210 * Int64(Self.ms))
        let stall = try #require(harness.endedStalls.first, "\(harness.emitted)")
        #expect(stall.stoppedNanos == 200 * Self.ms, "slept 410 ms, ran 210 ms")
    }

    @Test("the thread did not run: the process was stopped, and the span is no stall")
    func processStopped() {
        let harness = Self.lateWake(cpuDuringSleep: 0)
        #expect(harness.endedStalls.isEmpty, "\(harness.emitted)")
        #expect(harness.counters.discardedProcessStopped.load(ordering: .relaxed) == 1)
    }

    @Test("without a readable CPU clock the whole lateness counts as stopped, as before")
    func unreadableClock() {
        let harness = Self.lateWake(cpuDuringSleep: nil)
        #expect(harness.endedStalls.isEmpty)
        #expect(harness.counters.discardedProcessStopped.load(ordering: .relaxed) == 1)
    }
}
