import CStallMonitor
import Glibc
import Testing

@testable import StallMonitor

/// The look after a wake-up that the pool's enqueue hook caused is told apart from the others: the
/// pool probe may find the pool settled there even though that look took an enqueue (an idle
/// Hummingbird server's one-second timer job enqueues twice, the timer's resumption and an actor
/// hop, and cost the watchdog a third wake-up an interval later).
@Suite("Quick look after a producer's wake-up", .serialized)
struct QuickLookAfterWakeTests {
    @Test("a real enqueue ends the sleep; its look is woken, the next follows the wake-up, the third neither")
    func followsWakeOnlyAtTheLookAfterTheWake() async throws {
        let slot = CStallMonitor_wakeup_slot_acquire()
        try #require(slot >= 0)
        defer { CStallMonitor_wakeup_slot_release(slot) }
        try #require(CStallMonitor_pool_hook_install() == 0)
        defer { CStallMonitor_pool_hook_uninstall() }
        var schedule = EnqueueWakeSchedule(
            interval: 20_000_000, takeFlag: { CStallMonitor_pool_enqueued($0) != 0 },
            arm: { CStallMonitor_pool_arm($0, $1 ? 1 : 0) })
        _ = schedule.prepareToSleep(offering: slot) { CStallMonitor_pool_watch($0) }

        // A look finds the pool settled: quiet, so the watchdog parks until the next enqueue.
        var now = CStallMonitor_monotonic_ns()
        _ = schedule.noteEnqueues(now: now)
        #expect(!schedule.followsWake, "no wake-up came before this look")
        _ = schedule.nextLook(now: now, idle: true, settled: true)
        try #require(schedule.quiet)
        // The test's own tasks may enqueue at any moment: park again until a sleep is taken.
        var parked = false
        for _ in 0..<100 where !parked {
            parked = schedule.prepareToSleep(offering: slot) { _ in }
            if !parked {
                schedule.wokeUp()
                now = CStallMonitor_monotonic_ns()
                _ = schedule.noteEnqueues(now: now)
                _ = schedule.nextLook(now: now, idle: true, settled: true)
            }
        }
        try #require(parked, "the pool never stayed quiet long enough to park")

        // A job reaches the pool: the hook posts the parked slot.
        Task.detached {}
        let woke = CStallMonitor_wakeup_slot_wait_until(slot, CStallMonitor_monotonic_ns() + 5_000_000_000)
        #expect(woke == 0, "the enqueue did not end the sleep")
        schedule.wokeUp()

        now = CStallMonitor_monotonic_ns()
        let wake = schedule.noteEnqueues(now: now)
        #expect(wake.wokeAt != nil && schedule.producerWoke, "the look the enqueue brought")
        #expect(!schedule.followsWake)
        _ = schedule.nextLook(now: now, idle: true, settled: false)

        // The quick look (after a timed sleep: nothing woke it).
        now = CStallMonitor_monotonic_ns()
        _ = schedule.noteEnqueues(now: now)
        #expect(schedule.followsWake, "the quick look after the wake-up")
        #expect(!schedule.producerWoke)
        _ = schedule.nextLook(now: now, idle: true, settled: false)

        // Any look after it is an ordinary one.
        now = CStallMonitor_monotonic_ns()
        _ = schedule.noteEnqueues(now: now)
        #expect(!schedule.followsWake)
    }
}
