import CStallMonitor
import Glibc
import Testing

@testable import StallMonitor

/// The pool's enqueues post a parked watchdog late, through the slot's timerfd: the look they
/// bring comes when the quick look would, so an idle server's timer job costs the watchdog one
/// wake-up, not two (and no thread of the host's: a timer signal would wake every signalfd poller
/// of the process, such as libdispatch's event thread).
@Suite("Late post of the pool's enqueues", .serialized)
struct LatePostTests {
    /// A schedule that posts late, bound to `slot` and parked with the pool quiet; false when the
    /// test's own tasks kept the pool from staying quiet.
    private static func parkedSchedule(slot: Int32) -> (EnqueueWakeSchedule, Bool) {
        var schedule = EnqueueWakeSchedule(
            interval: 20_000_000, takeFlag: { CStallMonitor_pool_enqueued($0) != 0 },
            arm: { CStallMonitor_pool_arm($0, $1 ? 1 : 0) }, postsLate: true)
        _ = schedule.prepareToSleep(offering: slot) { CStallMonitor_pool_watch($0) }
        for _ in 0..<100 {
            let now = CStallMonitor_monotonic_ns()
            _ = schedule.noteEnqueues(now: now)
            _ = schedule.nextLook(now: now, idle: true, settled: true)
            if schedule.prepareToSleep(offering: slot, watch: { _ in }) { return (schedule, true) }
            schedule.wokeUp()
        }
        return (schedule, false)
    }

    /// Runs `body` with a wake-up slot and the pool's enqueue hook installed.
    private func withPoolSlot(_ body: (Int32) throws -> Void) throws {
        try #require(CStallMonitor_pool_hook_install() == 0)
        defer { CStallMonitor_pool_hook_uninstall() }
        let slot = CStallMonitor_wakeup_slot_acquire()
        try #require(slot >= 0)
        defer { CStallMonitor_wakeup_slot_release(slot) }
        try body(slot)
    }

    @Test(
        "a job reaching the pool wakes the parked watchdog once, no sooner than 2 ms after its note; that look may find the pool settled"
    )
    func enqueueWakesOnceLate() throws {
        try withPoolSlot { slot in
            var (schedule, parked) = Self.parkedSchedule(slot: slot)
            try #require(parked, "the pool never stayed quiet long enough to park")
            Task.detached {}
            let woke = CStallMonitor_wakeup_slot_wait_until(slot, CStallMonitor_monotonic_ns() + 5_000_000_000)
            let wokeAt = CStallMonitor_monotonic_ns()
            #expect(woke == 0, "the enqueue did not end the sleep")
            schedule.wokeUp()
            let note = try #require(
                schedule.noteEnqueues(now: wokeAt).wokeAt, "the look does not know the enqueue woke it")
            #expect(wokeAt >= note + quickLookAfterWake, "a timer never expires early")
            #expect(schedule.followsWake, "the late post's look takes the quick look's part")
            #expect(!schedule.producerWoke, "no quick look follows it")
            // Nothing posts an unparked slot: no second wake-up is on its way.
            usleep(20_000)
            #expect(CStallMonitor_wakeup_slot_take_posts(slot) == 0)
        }
    }

    @Test("a watchdog woken before its late post expired cancels it: nothing posts later")
    func wokenEarlyCancels() throws {
        try withPoolSlot { slot in
            let (_, parked) = Self.parkedSchedule(slot: slot)
            try #require(parked, "the pool never stayed quiet long enough to park")
            // A job's note arms the late post; something else (a span's start) wakes the watchdog
            // at once.
            let before = CStallMonitor_wakeup_slot_posted_at(slot)
            Task.detached {}
            let giveUp = CStallMonitor_monotonic_ns() + 5_000_000_000
            while CStallMonitor_wakeup_slot_posted_at(slot) == before, CStallMonitor_monotonic_ns() < giveUp {
                usleep(100)
            }
            try #require(CStallMonitor_wakeup_slot_posted_at(slot) != before, "no enqueue reached the hook")
            CStallMonitor_wakeup_slot_post(slot)
            #expect(CStallMonitor_wakeup_slot_wait_until(slot, 0) == 0)
            CStallMonitor_wakeup_slot_unpark(slot)
            CStallMonitor_pool_arm(slot, 0)
            // Expired before the wait (it ended the wait with the post) or cancelled now: either
            // way nothing is left to end the next sleep.
            _ = CStallMonitor_wakeup_late_post_taken(slot)
            usleep(20_000)
            #expect(CStallMonitor_wakeup_slot_take_posts(slot) == 0, "a cancelled late post expired after all")
        }
    }
}
