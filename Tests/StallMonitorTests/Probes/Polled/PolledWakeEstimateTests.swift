import Testing

@testable import StallMonitor

/// How the pull probe dates the start of a span from the thread's scheduler statistics.
@Suite("Dating a span found by the pull probe")
struct PolledWakeEstimateTests {
    private let ms: UInt64 = 1_000_000

    @Test("a thread that has not slept since the idle look woke its runnable time ago (exact)")
    func runnableSinceWake() {
        // Idle at 100 ms; at 120 ms it has been runnable 7 ms more and kept its switch count.
        let start = ThreadPollingProbe.estimatedWake(
            idleLook: (at: 100 * ms, switches: 40, runnable: 500 * ms), now: 120 * ms, switches: 40, runnable: 507 * ms)
        #expect(start == 113 * ms)
    }

    @Test("a thread that slept again (a blocking call) is dated to the middle of what is left")
    func sleptAgain() {
        // Ran 2 ms after waking, then blocked: it woke between 100 and 118 ms.
        let start = ThreadPollingProbe.estimatedWake(
            idleLook: (at: 100 * ms, switches: 40, runnable: 500 * ms), now: 120 * ms, switches: 41, runnable: 502 * ms)
        #expect(start == 109 * ms)
    }

    @Test("never before the idle look, never after now, and the middle when nothing is known")
    func bounds() {
        // More runnable time than wall time since the look (a stale reading): not before the look.
        let early = ThreadPollingProbe.estimatedWake(
            idleLook: (at: 100 * ms, switches: 1, runnable: 0), now: 120 * ms, switches: 1, runnable: 50 * ms)
        #expect(early == 100 * ms)
        let unknown = ThreadPollingProbe.estimatedWake(
            idleLook: (at: 100 * ms, switches: nil, runnable: nil), now: 120 * ms, switches: nil, runnable: nil)
        #expect(unknown == 110 * ms)
        let same = ThreadPollingProbe.estimatedWake(
            idleLook: (at: 120 * ms, switches: 1, runnable: 5), now: 120 * ms, switches: 1, runnable: 5)
        #expect(same == 120 * ms)
    }
}
