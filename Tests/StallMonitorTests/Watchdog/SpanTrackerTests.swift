import Synchronization
import Testing

@testable import StallMonitor

/// The span tracker driven with made-up activities and times (nanoseconds), no run loop.
@Suite("SpanTracker", .serialized)
struct SpanTrackerTests {
    /// Loop events, named as a run loop names the activities that cause them.
    private enum Activity {
        case entry, beforeTimers, beforeWaiting, afterWaiting, exit
    }

    private static let ms: UInt64 = 1_000_000
    private static let grace: UInt64 = 200_000

    private func makeTracker(publishAfter: UInt64 = 0, switches: SimulatedSwitches = SimulatedSwitches()) -> SpanTracker
    {
        SpanTracker(
            publishAfter: publishAfter, reentryGrace: Self.grace, wakeup: WakeupSignal(),
            voluntarySwitches: { switches.next() })
    }

    private func feed(_ tracker: SpanTracker, _ events: [(Activity, UInt64)]) {
        for (activity, time) in events {
            switch activity {
            case .entry: tracker.loopEntered(at: time)
            case .beforeTimers: tracker.passBegan(at: time)
            case .beforeWaiting: tracker.loopWillWait(at: time)
            case .afterWaiting: tracker.loopWoke(at: time)
            case .exit: tracker.loopExited(at: time)
            }
        }
    }

    @Test("afterWaiting opens a span, beforeWaiting suspends it, a late wake-up ends it and opens the next")
    func spanLifecycle() {
        let tracker = makeTracker()
        feed(tracker, [(.afterWaiting, 1_000 * Self.ms)])
        var span = tracker.currentSpan()
        #expect(span.sequence == 1 && span.phase == .open && span.start == 1_000 * Self.ms)

        feed(
            tracker,
            [(.beforeTimers, 1_010 * Self.ms), (.beforeTimers, 1_100 * Self.ms), (.beforeWaiting, 1_300 * Self.ms)])
        span = tracker.currentSpan()
        #expect(span.phase == .suspended && span.suspendedAt == 1_300 * Self.ms)
        #expect(tracker.endedSpan(1) == nil, "not ended until the grace has passed")

        feed(tracker, [(.afterWaiting, 2_000 * Self.ms)])
        span = tracker.currentSpan()
        #expect(span.sequence == 2 && span.phase == .open && span.start == 2_000 * Self.ms)
        let ended = tracker.endedSpan(1)
        #expect(ended?.end == 1_300 * Self.ms)
        #expect(ended?.passes == 3)
        #expect(ended?.longestPass == 200 * Self.ms)
    }

    @Test(
        "a pass that declared an idle yield ends its span at the wait, however soon the loop wakes and whether or not the thread slept"
    )
    func idleYieldEndsSpan() {
        let switches = SimulatedSwitches()
        switches.preempted.store(true, ordering: .relaxed)
        let yields = Atomic<UInt64>(0)
        let tracker = SpanTracker(
            publishAfter: 0, reentryGrace: Self.grace, wakeup: WakeupSignal(),
            voluntarySwitches: { switches.next() }, idleYields: { yields.load(ordering: .relaxed) })
        feed(tracker, [(.afterWaiting, 10 * Self.ms), (.beforeTimers, 11 * Self.ms)])
        yields.add(1, ordering: .relaxed)  // idle work ran and left more for the next pass
        feed(tracker, [(.beforeWaiting, 20 * Self.ms), (.afterWaiting, 20 * Self.ms + Self.grace / 2)])
        var span = tracker.currentSpan()
        #expect(span.sequence == 2 && span.phase == .open && span.start == 20 * Self.ms + Self.grace / 2)
        #expect(tracker.endedSpan(1)?.end == 20 * Self.ms)
        // The next pass declares nothing: a quick wake-up continues its span as usual.
        feed(tracker, [(.beforeWaiting, 30 * Self.ms), (.afterWaiting, 30 * Self.ms + Self.grace / 2)])
        span = tracker.currentSpan()
        #expect(span.sequence == 2 && span.phase == .open)
    }

    @Test("a wake-up within the reentry grace continues the same span")
    func quickWakeUpContinues() {
        let tracker = makeTracker()
        feed(
            tracker,
            [
                (.afterWaiting, 10 * Self.ms), (.beforeWaiting, 20 * Self.ms),
                (.afterWaiting, 20 * Self.ms + Self.grace / 2),
            ])
        let span = tracker.currentSpan()
        #expect(span.sequence == 1 && span.phase == .open && span.start == 10 * Self.ms)
    }

    @Test(
        "a pause longer than the grace continues the span when the thread never slept (preempted), ends it when it did")
    func preemptedPause() {
        let switches = SimulatedSwitches()
        let tracker = makeTracker(switches: switches)
        feed(tracker, [(.afterWaiting, 10 * Self.ms)])
        switches.preempted.store(true, ordering: .relaxed)
        feed(tracker, [(.beforeWaiting, 20 * Self.ms), (.afterWaiting, 25 * Self.ms)])  // 5 ms off the CPU
        var span = tracker.currentSpan()
        #expect(span.sequence == 1 && span.phase == .open && span.start == 10 * Self.ms)
        switches.preempted.store(false, ordering: .relaxed)
        feed(tracker, [(.beforeWaiting, 30 * Self.ms), (.afterWaiting, 35 * Self.ms)])  // 5 ms asleep
        span = tracker.currentSpan()
        #expect(span.sequence == 2 && span.start == 35 * Self.ms)
        #expect(tracker.endedSpan(1)?.end == 30 * Self.ms)
    }

    @Test("leaving and re-entering the outermost run within the grace continues the span")
    func reentryContinues() {
        let tracker = makeTracker()
        feed(tracker, [(.entry, 10 * Self.ms), (.exit, 500 * Self.ms), (.entry, 500 * Self.ms + 1_000)])
        let span = tracker.currentSpan()
        #expect(span.sequence == 1 && span.phase == .open && span.start == 10 * Self.ms)
    }

    @Test("a nested run that sleeps ends the enclosing span; back in the callout a new one opens")
    func nestedRunThatSleeps() {
        let tracker = makeTracker()
        feed(
            tracker,
            [
                (.entry, 0),  // the outer run
                (.beforeWaiting, 1 * Self.ms),
                (.afterWaiting, 10 * Self.ms),  // outer callout begins
                (.entry, 100 * Self.ms),  // nested run
                (.beforeWaiting, 100 * Self.ms + 10_000),  // nested run sleeps
            ])
        #expect(tracker.currentSpan().phase == .suspended)
        feed(tracker, [(.afterWaiting, 400 * Self.ms), (.exit, 400 * Self.ms + 10_000)])
        let span = tracker.currentSpan()  // 1: the entry, 2: the outer callout, 3: after the nested run
        #expect(span.sequence == 3 && span.phase == .open && span.start == 400 * Self.ms)
        #expect(tracker.endedSpan(2)?.end == 100 * Self.ms + 10_000)
        // Back in the outer run, its callout ends and the loop sleeps: the span ends.
        feed(tracker, [(.beforeWaiting, 900 * Self.ms)])
        #expect(tracker.currentSpan().phase == .suspended)
        #expect(tracker.currentSpan().suspendedAt == 900 * Self.ms)
    }

    @Test("a monitor started inside a callout (outer entry never seen) keeps the span open after a nested run")
    func startedInsideCallout() {
        let tracker = makeTracker()
        tracker.assumeInsideRun(awakeAt: nil)
        feed(
            tracker,
            [
                (.beforeWaiting, 1 * Self.ms),  // the callout that started the monitor ends
                (.afterWaiting, 10 * Self.ms),
                (.entry, 20 * Self.ms), (.beforeWaiting, 20 * Self.ms),  // nested run sleeps
                (.afterWaiting, 320 * Self.ms), (.exit, 320 * Self.ms),  // and returns to the callout
            ])
        let span = tracker.currentSpan()
        #expect(span.sequence == 2 && span.phase == .open && span.start == 320 * Self.ms)
        feed(tracker, [(.exit, 800 * Self.ms)])  // the outermost run returns
        #expect(tracker.currentSpan().phase == .suspended)
    }

    @Test("a monitor started inside a callout opens a span at once, continued by a pass that follows without waiting")
    func startedInsideCalloutIsAwake() {
        let tracker = makeTracker()
        tracker.assumeInsideRun(awakeAt: 5 * Self.ms)
        #expect(tracker.currentSpan().sequence == 1 && tracker.currentSpan().phase == .open)
        // The start callout ends, the loop is about to wait but finds work and runs another pass.
        feed(
            tracker,
            [
                (.beforeWaiting, 6 * Self.ms), (.afterWaiting, 6 * Self.ms + 50_000),
                (.beforeTimers, 6 * Self.ms + 60_000),
            ])
        var span = tracker.currentSpan()
        #expect(span.sequence == 1 && span.phase == .open && span.start == 5 * Self.ms)
        // Or it runs the next pass without waiting at all: still the same span.
        feed(tracker, [(.beforeTimers, 400 * Self.ms), (.beforeWaiting, 800 * Self.ms)])
        span = tracker.currentSpan()
        #expect(span.sequence == 1 && span.phase == .suspended && span.suspendedAt == 800 * Self.ms)
        #expect(tracker.passesSoFar(now: 800 * Self.ms).passes == 3)
    }

    @Test("a nested run that never sleeps neither restarts nor ends the span")
    func nestedRunThatStaysAwake() {
        let tracker = makeTracker()
        feed(
            tracker,
            [
                (.entry, 0), (.afterWaiting, 1), (.entry, 10 * Self.ms), (.beforeTimers, 20 * Self.ms),
                (.exit, 30 * Self.ms),
            ])
        let span = tracker.currentSpan()
        #expect(span.sequence == 1 && span.phase == .open && span.start == 0)
    }

    @Test("spans shorter than publishAfter are not published")
    func shortSpansAreNotPublished() {
        let tracker = makeTracker(publishAfter: 125 * Self.ms)
        feed(tracker, [(.afterWaiting, 0), (.beforeWaiting, 100 * Self.ms), (.afterWaiting, 200 * Self.ms)])
        #expect(tracker.endedSpan(1) == nil)
        feed(tracker, [(.beforeWaiting, 400 * Self.ms), (.afterWaiting, 500 * Self.ms)])
        #expect(tracker.endedSpan(2)?.end == 400 * Self.ms)
    }
}
