import CStallMonitor
import Glibc
import Synchronization
import Testing

@testable import StallMonitor

/// The span tracker fed with counter-stamped waits and wakes (what the run loop probe does where
/// the kernel keeps time with the CPU's counter): made-up counter readings at 0.5 ns per tick and
/// a made-up monotonic clock, and once the real counter against the real clock.
@Suite("SpanTracker with counter stamps", .serialized)
struct SpanTrackerCounterTests {
    private static let ms: UInt64 = 1_000_000
    private static let grace: UInt64 = 200_000
    /// 0.5 ns per tick, as a 32.32 fixed-point number.
    private static let halfNanosecondPerTick: UInt64 = 1 << 31
    /// Ticks in `nanoseconds` at that rate.
    private static func ticks(_ nanoseconds: UInt64) -> UInt64 { nanoseconds * 2 }

    /// A made-up monotonic clock that counts its reads.
    private final class SimulatedClock: Sendable {
        let now: Atomic<UInt64>
        let reads = Atomic<Int>(0)

        init(at start: UInt64) { now = Atomic(start) }

        func read() -> UInt64 {
            reads.add(1, ordering: .relaxed)
            return now.load(ordering: .relaxed)
        }
    }

    private func makeTracker(
        clock: SimulatedClock, switches: SimulatedSwitches = SimulatedSwitches(), grace: UInt64 = grace
    ) -> SpanTracker {
        SpanTracker(
            publishAfter: 0, reentryGrace: grace, wakeup: WakeupSignal(), counterRate: Self.halfNanosecondPerTick,
            monotonicNow: { clock.read() }, voluntarySwitches: { switches.next() })
    }

    @Test("wakes within the grace in ticks continue the span and never read the monotonic clock")
    func quickWakesReadNoClock() {
        let clock = SimulatedClock(at: 5_000 * Self.ms)
        let tracker = makeTracker(clock: clock)
        let start: UInt64 = 1_000_000
        tracker.loopWoke(ticks: start)
        #expect(tracker.currentSpan().sequence == 1 && tracker.currentSpan().start == 5_000 * Self.ms)
        #expect(clock.reads.load(ordering: .relaxed) == 1, "the span's start is read once")
        var ticks = start
        for _ in 0..<1_000 {
            ticks += Self.ticks(1 * Self.ms)
            tracker.loopWillWait(ticks: ticks)
            ticks += Self.ticks(Self.grace) - 1
            tracker.loopWoke(ticks: ticks)
        }
        let span = tracker.currentSpan()
        #expect(span.sequence == 1 && span.phase == .open)
        #expect(clock.reads.load(ordering: .relaxed) == 1, "no wake within the grace reads the monotonic clock")
    }

    @Test("a counter-stamped suspension is converted from the span's start: suspendedAt and the ended span's end")
    func suspensionConvertedFromSpanStart() {
        let clock = SimulatedClock(at: 5_000 * Self.ms)
        let tracker = makeTracker(clock: clock)
        let start: UInt64 = 7_777_777
        tracker.loopWoke(ticks: start)
        tracker.loopWillWait(ticks: start + Self.ticks(300 * Self.ms))
        var span = tracker.currentSpan()
        #expect(span.phase == .suspended && span.suspendedAt == 5_300 * Self.ms)
        #expect(tracker.awakeNanos(now: 9_000 * Self.ms) == 300 * Self.ms)

        // Awake again a second later (the thread slept): the span ended at its suspension.
        clock.now.store(6_300 * Self.ms, ordering: .relaxed)
        tracker.loopWoke(ticks: start + Self.ticks(1_300 * Self.ms))
        span = tracker.currentSpan()
        #expect(span.sequence == 2 && span.phase == .open && span.start == 6_300 * Self.ms)
        let ended = tracker.endedSpan(1)
        #expect(ended?.start == 5_000 * Self.ms)
        #expect(ended?.end == 5_300 * Self.ms)
    }

    @Test("a wake past the grace in ticks on a thread that never slept continues the span (a preemption)")
    func preemptedWakeContinues() {
        let clock = SimulatedClock(at: 5_000 * Self.ms)
        let switches = SimulatedSwitches()
        let tracker = makeTracker(clock: clock, switches: switches)
        tracker.loopWoke(ticks: 100)
        switches.preempted.store(true, ordering: .relaxed)
        tracker.loopWillWait(ticks: 100 + Self.ticks(10 * Self.ms))
        clock.now.store(5_050 * Self.ms, ordering: .relaxed)
        tracker.loopWoke(ticks: 100 + Self.ticks(50 * Self.ms))
        let span = tracker.currentSpan()
        #expect(span.sequence == 1 && span.phase == .open && span.start == 5_000 * Self.ms)
    }

    @Test("a suspension stamped with the monotonic clock, then a counter-stamped wake: judged on the monotonic clock")
    func mixedStamps() {
        let clock = SimulatedClock(at: 5_000 * Self.ms)
        let tracker = makeTracker(clock: clock)
        tracker.loopWoke(ticks: 100)
        tracker.loopWillWait(at: 5_010 * Self.ms)
        #expect(tracker.currentSpan().suspendedAt == 5_010 * Self.ms)
        clock.now.store(5_010 * Self.ms + Self.grace / 2, ordering: .relaxed)
        tracker.loopWoke(ticks: 100 + Self.ticks(Self.grace * 1_000))  // the ticks alone would say: past the grace
        #expect(tracker.currentSpan().sequence == 1, "within the grace on the monotonic clock")

        tracker.loopWillWait(at: 5_020 * Self.ms)
        clock.now.store(5_030 * Self.ms, ordering: .relaxed)
        tracker.loopWoke(ticks: 100 + Self.ticks(30 * Self.ms))
        #expect(tracker.currentSpan().sequence == 2)
        #expect(tracker.endedSpan(1)?.end == 5_020 * Self.ms)
    }

    @Test("the real counter, converted at its measured rate, agrees with the monotonic clock over 50 ms")
    func realCounterAgreesWithMonotonicClock() throws {
        let rate = CStallMonitor_counter_rate()
        // Where the kernel does not keep time with the counter, the probe stamps with the
        // monotonic clock (its rate is 0): nothing to compare.
        guard rate != 0 else { return }
        let tracker = SpanTracker(
            publishAfter: 0, reentryGrace: Self.grace, wakeup: WakeupSignal(), counterRate: rate,
            voluntarySwitches: { 0 })
        let (startTicks, startTime) = try Self.readTogether()
        // A span begun with the counter reads the monotonic clock itself: compare from its start.
        tracker.loopWoke(ticks: startTicks)
        let begun = tracker.currentSpan().start
        usleep(50_000)
        let (endTicks, endTime) = try Self.readTogether()
        tracker.loopWillWait(ticks: endTicks)
        let converted = tracker.currentSpan().suspendedAt &- begun
        let measured = endTime - startTime
        // The span's suspension is converted from its start's counter reading, whatever the delay
        // before the tracker read the clock there. Each pair was read within 20 µs, and the rate
        // is right to a few parts per million (to 0.05 % where the kernel slews its clock).
        let difference = converted > measured ? converted - measured : measured - converted
        let allowed = 40_000 + measured / 1_000
        #expect(difference <= allowed, "converted \(converted) ns, measured \(measured) ns")
    }

    /// The counter and the monotonic clock read together: the counter's midpoint around a clock
    /// read whose two counter readings were less than 20 µs apart (a preempted try is retried).
    private static func readTogether() throws -> (ticks: UInt64, nanoseconds: UInt64) {
        let rate = CStallMonitor_counter_rate()
        for _ in 0..<1_000 {
            let before = CStallMonitor_counter_ticks()
            let nanoseconds = CStallMonitor_monotonic_ns()
            let after = CStallMonitor_counter_ticks()
            guard after >= before else { continue }
            let gap = (after - before).multipliedFullWidth(by: rate)
            if gap.high << 32 | gap.low >> 32 < 20_000 { return (before + (after - before) / 2, nanoseconds) }
        }
        throw CounterReadError()
    }

    private struct CounterReadError: Error {}
}
