import CStallMonitor
import Glibc
import Testing

/// The wait on a wake-up slot: its deadline is absolute on the monotonic clock (a process stopped
/// with SIGSTOP and continued finds it past at once, and a post made as the process resumes does
/// not hide that: `StallDemoProductionTests` stops a real host), and every post ends one wait.
@Suite("Wake-up slot wait")
struct WakeupSlotWaitTests {
    @Test(
        "a wait times out no sooner than its deadline; a post ends the next at once; a deadline already past wins over a post"
    )
    func deadlinesAndPosts() throws {
        let slot = CStallMonitor_wakeup_slot_acquire()
        try #require(slot >= 0)
        defer { CStallMonitor_wakeup_slot_release(slot) }

        let start = CStallMonitor_monotonic_ns()
        let deadline = start + 20_000_000
        #expect(CStallMonitor_wakeup_slot_wait_until(slot, deadline) == ETIMEDOUT)
        #expect(CStallMonitor_monotonic_ns() >= deadline, "a timer never expires early")

        CStallMonitor_wakeup_slot_post(slot)
        #expect(CStallMonitor_wakeup_slot_wait_until(slot, CStallMonitor_monotonic_ns() + 5_000_000_000) == 0)
        #expect(CStallMonitor_wakeup_slot_take_posts(slot) == 0, "the wait took the post")

        CStallMonitor_wakeup_slot_post(slot)
        #expect(
            CStallMonitor_wakeup_slot_wait_until(slot, CStallMonitor_monotonic_ns() - 1) == ETIMEDOUT,
            "the deadline had passed")
        #expect(CStallMonitor_wakeup_slot_take_posts(slot) == 1, "the post is still there for the next look")
    }
}
