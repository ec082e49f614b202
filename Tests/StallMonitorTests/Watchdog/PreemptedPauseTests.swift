import Testing

@testable import StallMonitor

/// A congested loop on a busy machine: between two passes the thread is preempted for longer
/// than the re-entry grace. It never went idle, so the watchdog must not end the span there.
@Suite("Preempted between passes", .serialized)
struct PreemptedPauseTests {
    private static let ms = ThreadWatchHarness.ms

    @Test("a tracked span paused 5 ms without sleeping goes on; it ends when the thread really sleeps")
    func trackedSpanSurvivesPreemption() throws {
        let harness = ThreadWatchHarness()
        let (tracker, watch, switches) = (harness.tracker, harness.watch, harness.switches)
        tracker.loopWoke(at: 1_000 * Self.ms)  // span 1 opens
        _ = watch.step(now: 1_130 * Self.ms)  // past the lead: tracked
        switches.preempted.store(true, ordering: .relaxed)
        tracker.loopWillWait(at: 1_200 * Self.ms)  // beforeWaiting, then off the CPU
        let deadline = watch.step(now: 1_205 * Self.ms)
        #expect(harness.emitted.isEmpty, "a preemption is not the end of the span")
        #expect(
            deadline.map { $0 > 1_205 * Self.ms } == true, "the watchdog does not spin: \(String(describing: deadline))"
        )
        tracker.loopWoke(at: 1_206 * Self.ms)  // awake again: same span
        #expect(tracker.currentSpan().sequence == 1)

        switches.preempted.store(false, ordering: .relaxed)
        tracker.loopWillWait(at: 1_400 * Self.ms)  // this time it sleeps
        _ = watch.step(now: 1_401 * Self.ms)
        let stalls = harness.endedStalls
        try #require(stalls.count == 1, "\(harness.emitted)")
        #expect(stalls[0].sequence == 1)
        #expect(stalls[0].end - stalls[0].spanStart == 400 * Self.ms)
    }

    @Test("an untracked short span paused past the grace without sleeping is still watched, and tracked once long")
    func shortSpanSurvivesPreemption() throws {
        let harness = ThreadWatchHarness()
        let (tracker, watch, switches) = (harness.tracker, harness.watch, harness.switches)
        tracker.loopWoke(at: 1_000 * Self.ms)
        switches.preempted.store(true, ordering: .relaxed)
        tracker.loopWillWait(at: 1_050 * Self.ms)  // 50 ms in, then preempted 10 ms
        #expect(watch.step(now: 1_060 * Self.ms) != nil, "not done with the span")
        tracker.loopWoke(at: 1_060 * Self.ms)
        _ = watch.step(now: 1_130 * Self.ms)  // past the lead: tracked
        switches.preempted.store(false, ordering: .relaxed)
        tracker.loopWillWait(at: 1_300 * Self.ms)
        _ = watch.step(now: 1_301 * Self.ms)
        let stalls = harness.endedStalls
        try #require(stalls.count == 1, "\(harness.emitted)")
        #expect(stalls[0].end - stalls[0].spanStart == 300 * Self.ms, "one 300 ms stall, not 50 + 240 ms")
    }
}
