import Testing

@testable import StallMonitor

/// A watchdog that gets no CPU for a whole stall (an overloaded machine) never tracks the span,
/// but the tracker publishes it: the stall must still be reported, exactly timed, without samples.
@Suite("Missed stalls", .serialized)
struct MissedStallTests {
    private static let ms = ThreadWatchHarness.ms

    @Test("a 400 ms span the watchdog never saw is reported with its exact duration and no samples")
    func starvedWatchdog() throws {
        let harness = ThreadWatchHarness()
        let (tracker, watch) = (harness.tracker, harness.watch)
        #expect(watch.step(now: 1 * Self.ms) == nil, "nothing open yet: the watchdog would park")
        tracker.loopWoke(at: 1_000 * Self.ms)  // afterWaiting: span 1 opens
        tracker.loopWillWait(at: 1_400 * Self.ms)  // beforeWaiting: suspended
        tracker.loopWoke(at: 2_000 * Self.ms)  // afterWaiting: span 1 ended at 1,400 ms, span 2 opens
        _ = watch.step(now: 2_001 * Self.ms)  // the watchdog finally runs
        let recorded = harness.emitted
        try #require(recorded.count == 1)
        guard case .ended(let stall) = recorded[0] else {
            Issue.record("expected an ended stall, got \(recorded[0])")
            return
        }
        #expect(stall.sequence == 1)
        #expect(stall.end - stall.spanStart == 400 * Self.ms)
        #expect(stall.samples.isEmpty && stall.skipped["watchdogStarved"] == 1)
        _ = watch.step(now: 2_002 * Self.ms)
        #expect(harness.emitted.count == 1, "reported once")
    }

    @Test("stop() reports a stall the watchdog never saw, also the last one, which nothing has published yet")
    func missedAtStop() throws {
        let harness = ThreadWatchHarness()
        let (tracker, watch) = (harness.tracker, harness.watch)
        tracker.loopWoke(at: 1_000 * Self.ms)  // span 1: 300 ms, published when span 2 opens
        tracker.loopWillWait(at: 1_300 * Self.ms)
        tracker.loopWoke(at: 2_000 * Self.ms)  // span 2: 350 ms, then the loop waits for good
        tracker.loopWillWait(at: 2_350 * Self.ms)
        watch.finishOnStop()  // the watchdog got no CPU before stop()
        let stalls = harness.endedStalls
        try #require(stalls.count == 2, "\(harness.emitted)")
        #expect(stalls.map(\.sequence) == [1, 2])
        #expect(stalls.map { ($0.end - $0.spanStart) / Self.ms } == [300, 350])
        #expect(stalls.allSatisfy { $0.samples.isEmpty && $0.skipped["watchdogStarved"] == 1 })
    }

    @Test("stop() ends a tracked stall that was published (a newer span began) where it ended")
    func trackedThenNewerSpanAtStop() throws {
        let harness = ThreadWatchHarness()
        let (tracker, watch) = (harness.tracker, harness.watch)
        tracker.loopWoke(at: 1_000 * Self.ms)
        _ = watch.step(now: 1_130 * Self.ms)  // past the lead: tracked
        tracker.loopWillWait(at: 1_400 * Self.ms)
        tracker.loopWoke(at: 1_500 * Self.ms)  // span 2 opens: span 1 is published
        tracker.loopWillWait(at: 1_510 * Self.ms)  // a short span 2
        watch.finishOnStop()
        let stalls = harness.endedStalls
        try #require(stalls.count == 1, "\(harness.emitted)")
        #expect(stalls[0].sequence == 1)
        #expect(stalls[0].end - stalls[0].spanStart == 400 * Self.ms)
    }

    @Test("a short span the watchdog never saw is not reported")
    func shortSpan() {
        let harness = ThreadWatchHarness()
        let (tracker, watch) = (harness.tracker, harness.watch)
        tracker.loopWoke(at: 1_000 * Self.ms)
        tracker.loopWillWait(at: 1_200 * Self.ms)  // 200 ms: published (past the lead), below the threshold
        tracker.loopWoke(at: 2_000 * Self.ms)
        _ = watch.step(now: 2_001 * Self.ms)
        #expect(harness.emitted.isEmpty)
    }

    @Test("three stalls the watchdog never saw (a short span between them) are each reported, in order, exactly timed")
    func severalMissed() throws {
        let harness = ThreadWatchHarness()
        let tracker = harness.tracker
        var now: UInt64 = 1_000 * Self.ms
        for length: UInt64 in [300, 100, 500, 700] {  // ms; 100 is below the threshold
            tracker.loopWoke(at: now)
            tracker.loopWillWait(at: now + length * Self.ms)
            now += length * Self.ms + 50 * Self.ms
        }
        tracker.loopWoke(at: now)  // the last one ends
        _ = harness.watch.step(now: now + 1)
        let stalls = harness.endedStalls
        #expect(stalls.map { ($0.end - $0.spanStart) / Self.ms } == [300, 500, 700])
        #expect(stalls.map(\.sequence) == [1, 3, 4])
        #expect(stalls.allSatisfy { $0.skipped["watchdogStarved"] == 1 })
        _ = harness.watch.step(now: now + 2)
        #expect(harness.endedStalls.count == 3, "each reported once")
    }

    @Test("of more missed stalls than the tracker keeps, the last 16 are reported")
    func ringOverflow() {
        let harness = ThreadWatchHarness()
        var now: UInt64 = 1_000 * Self.ms
        for _ in 0..<20 {
            harness.tracker.loopWoke(at: now)
            harness.tracker.loopWillWait(at: now + 300 * Self.ms)
            now += 400 * Self.ms
        }
        harness.tracker.loopWoke(at: now)
        _ = harness.watch.step(now: now + 1)
        #expect(harness.endedStalls.map(\.sequence) == Array(5...20).map(UInt64.init))
        #expect(harness.counters.longSpansOverwritten.load(ordering: .relaxed) == 4, "the 4 forgotten ones are counted")
        _ = harness.watch.step(now: now + 2)
        #expect(harness.counters.longSpansOverwritten.load(ordering: .relaxed) == 4, "and counted once")
    }

    @Test("the tracker keeps the last 16 long spans however many short ones came between")
    func shortSpansBetween() {
        let harness = ThreadWatchHarness()
        var now: UInt64 = 1_000 * Self.ms
        var longSequences: [UInt64] = []
        for round in 0..<3 {
            harness.tracker.loopWoke(at: now)  // a 300 ms stall
            harness.tracker.loopWillWait(at: now + 300 * Self.ms)
            longSequences.append(UInt64(round * 16 + 1))
            now += 400 * Self.ms
            for _ in 0..<15 {  // then 15 passes of 1 ms
                harness.tracker.loopWoke(at: now)
                harness.tracker.loopWillWait(at: now + 1 * Self.ms)
                now += 2 * Self.ms
            }
        }
        harness.tracker.loopWoke(at: now)
        _ = harness.watch.step(now: now + 1)
        #expect(harness.endedStalls.map(\.sequence) == longSequences, "sequences 1, 17 and 33 share a slot mod 16")
        #expect(harness.counters.longSpansOverwritten.load(ordering: .relaxed) == 0)
    }

    @Test("a tracked stall whose end was overwritten, then more missed stalls: the count of forgotten ones is exact")
    func overwrittenAfterTracking() {
        let harness = ThreadWatchHarness()
        var now: UInt64 = 1_000 * Self.ms
        harness.tracker.loopWoke(at: now)
        _ = harness.watch.step(now: now + 130 * Self.ms)  // past the lead: tracking span 1
        harness.tracker.loopWillWait(at: now + 300 * Self.ms)
        now += 400 * Self.ms
        for _ in 0..<20 {  // the watchdog starves: 20 more stalls
            harness.tracker.loopWoke(at: now)
            harness.tracker.loopWillWait(at: now + 300 * Self.ms)
            now += 400 * Self.ms
        }
        harness.tracker.loopWoke(at: now)
        _ = harness.watch.step(now: now + 1)
        let sequences = harness.endedStalls.map(\.sequence)
        #expect(sequences.first == 1, "the tracked one is reported (its end estimated)")
        #expect(Array(sequences.dropFirst()) == Array(6...21).map(UInt64.init))
        #expect(harness.counters.longSpansOverwritten.load(ordering: .relaxed) == 4, "spans 2 to 5")
    }
}
