import Glibc
import Testing

@testable import StallMonitor

/// The watchdog woke far later than it asked. If it waited for a CPU meanwhile (the scheduler's
/// run-queue statistics) or the monitored thread ran on a CPU, the process was not stopped (the
/// watchdog only waited for a CPU): the stall is real. Otherwise the time is taken for a stopped
/// process (SIGSTOP, a debugger) and is not a stall. The thread's CPU clock and the run-queue wait
/// are given by hand here to make each case exact; `StallDemoProductionTests` stops a real process.
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
        let cpu = SimulatedCPU()
        if cpuDuringSleep == nil { cpu.nanos = -1 }
        let harness = ThreadWatchHarness(environment: .init(threadCPUNanos: { _ in cpu.nanos }))
        harness.tracker.loopWoke(at: 1_000 * ms)  // afterWaiting: the span opens
        _ = harness.watch.step(now: 1_130 * ms)  // past the lead: tracking begins
        harness.watch.noteWatchdogSleeps(now: 1_140 * ms)  // asks to wake at 1,150 ms
        if let cpuDuringSleep { cpu.nanos += cpuDuringSleep }
        harness.watch.noteProcessStopped(lateness: 400 * ms, now: 1_550 * ms)
        _ = harness.watch.step(now: 1_550 * ms)
        harness.tracker.loopWillWait(at: 1_600 * ms)  // beforeWaiting
        _ = harness.watch.step(now: 1_601 * ms)
        return harness
    }

    @Test("lateness counts from the deadline, or from when the wait began if the watchdog was still working then")
    func latenessFromWaitStart() {
        let ms: UInt64 = 1_000_000
        // Asleep before the deadline, woke 600 ms after it: late.
        #expect(
            Watchdog.lateness(deadline: 1_000 * ms, sleptAt: 990 * ms, woke: 1_600 * ms, stoppedAfter: 250 * ms) == 600
                * ms)
        // Woke 100 ms late: not late enough to mean anything.
        #expect(
            Watchdog.lateness(deadline: 1_000 * ms, sleptAt: 990 * ms, woke: 1_100 * ms, stoppedAfter: 250 * ms) == nil)
        // A 900 ms unwinding ran past the deadline; the wait then returned at once: not late.
        #expect(
            Watchdog.lateness(
                deadline: 1_000 * ms, sleptAt: 1_900 * ms, woke: 1_900 * ms + 20_000, stoppedAfter: 250 * ms) == nil)
        // Started waiting late, and then overslept by 400 ms on top: late by those 400 ms only.
        #expect(
            Watchdog.lateness(deadline: 1_000 * ms, sleptAt: 1_900 * ms, woke: 2_300 * ms, stoppedAfter: 250 * ms)
                == 400 * ms)
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

    @Test("the scheduler says the watchdog waited for a CPU the whole time: nothing counts as stopped")
    func waitedForCPU() throws {
        // No CPU clock: only the scheduler tells.
        let harness = ThreadWatchHarness(environment: .init(threadCPUNanos: { _ in -1 }))
        harness.tracker.loopWoke(at: 1_000 * Self.ms)
        _ = harness.watch.step(now: 1_130 * Self.ms)
        harness.watch.noteWatchdogSleeps(now: 1_140 * Self.ms)
        harness.watch.noteProcessStopped(lateness: 400 * Self.ms, now: 1_550 * Self.ms, waitedForCPU: 390 * Self.ms)
        _ = harness.watch.step(now: 1_550 * Self.ms)
        harness.tracker.loopWillWait(at: 1_600 * Self.ms)
        _ = harness.watch.step(now: 1_601 * Self.ms)
        let stall = try #require(harness.endedStalls.first, "\(harness.emitted)")
        #expect(stall.stoppedNanos == 10 * Self.ms, "400 ms late, 390 ms of it waiting for a CPU")
    }

    /// The watchdog parks at 900 ms with nothing open; a span opens at 1,000 ms and would wake it
    /// at once, but it wakes at 1,500 ms, having waited `waitedForCPU` for a CPU; the span goes on
    /// until 1,700 ms (threshold 250 ms).
    private static func lateWakeFromPark(waitedForCPU: UInt64, spanEndsBeforeWake: Bool = false) -> ThreadWatchHarness {
        let harness = ThreadWatchHarness()
        #expect(harness.watch.step(now: 900 * Self.ms) == nil)
        harness.tracker.loopWoke(at: 1_000 * Self.ms)  // afterWaiting: the span opens
        if spanEndsBeforeWake {
            harness.tracker.loopWillWait(at: 1_400 * Self.ms)  // it ends before the watchdog runs
            harness.tracker.loopWoke(at: 1_450 * Self.ms)
        }
        harness.watch.noteWokeFromPark(
            parkedAt: 900 * Self.ms, now: 1_500 * Self.ms,
            stoppedAfter: 250 * Self.ms, waitedForCPU: waitedForCPU)
        _ = harness.watch.step(now: 1_500 * Self.ms)
        if !spanEndsBeforeWake {
            harness.tracker.loopWillWait(at: 1_700 * Self.ms)
            _ = harness.watch.step(now: 1_701 * Self.ms)
        }
        return harness
    }

    @Test("stopped right after a span began, while the watchdog was parked: the stopped time is no stall")
    func stoppedWhileParked() {
        let harness = Self.lateWakeFromPark(waitedForCPU: 5 * Self.ms)
        #expect(harness.endedStalls.isEmpty, "700 ms span, 495 ms of it stopped: \(harness.emitted)")
        #expect(harness.counters.discardedProcessStopped.load(ordering: .relaxed) == 1)
    }

    @Test("a parked watchdog that waited for a CPU as long as it was late: the stall is real")
    func starvedWhileParked() throws {
        let harness = Self.lateWakeFromPark(waitedForCPU: 495 * Self.ms)
        let stall = try #require(harness.endedStalls.first, "\(harness.emitted)")
        #expect(stall.end - stall.spanStart == 700 * Self.ms)
        #expect(stall.stoppedNanos == 5 * Self.ms)
    }

    @Test("a span that began and ended while the process was stopped and the watchdog parked is no stall")
    func stoppedSpanEndedBeforeWake() {
        let harness = Self.lateWakeFromPark(waitedForCPU: 0, spanEndsBeforeWake: true)
        #expect(harness.endedStalls.isEmpty, "400 ms span, 500 ms lateness: \(harness.emitted)")
        #expect(harness.counters.discardedProcessStopped.load(ordering: .relaxed) == 1)
    }

    @Test("a span that ended before a starved watchdog woke is reported, minus nothing")
    func starvedSpanEndedBeforeWake() throws {
        let harness = Self.lateWakeFromPark(waitedForCPU: 500 * Self.ms, spanEndsBeforeWake: true)
        let stall = try #require(harness.endedStalls.first, "\(harness.emitted)")
        #expect(stall.end - stall.spanStart == 400 * Self.ms)
        #expect(stall.stoppedNanos == 0)
    }
}
