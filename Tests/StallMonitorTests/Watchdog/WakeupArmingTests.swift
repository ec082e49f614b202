import CStallMonitor
import Glibc
import Testing

@testable import StallMonitor

/// A watchdog parked for one probe's sake is woken only by producers whose probe armed the sleep:
/// a busy event loop beside an idle pool must not end the watchdog's sleep at every return from
/// its wait (figure 11a found the watchdog woken about 4,000 times a second that way, a tenth of a
/// busy server's CPU).
@Suite("Wake-up arming", .serialized)
struct WakeupArmingTests {
    /// How many times the slot was posted since the last take (takes the posts).
    private func posts(_ slot: Int32) -> Int32 {
        CStallMonitor_wakeup_slot_take_posts(slot)
    }

    @Test(
        "a loop's return from epoll_wait posts a parked slot only while the loop's probe armed it",
        .enabled(if: Kernel.epollWaitWakesWatchdog))
    func loopReturnPostsOnlyWhenArmed() throws {
        let slot = CStallMonitor_wakeup_slot_acquire()
        try #require(slot >= 0)
        defer { CStallMonitor_wakeup_slot_release(slot) }
        let watch = CStallMonitor_loop_watch_acquire()
        try #require(watch >= 0)
        defer { CStallMonitor_loop_watch_release(watch) }
        #expect(CStallMonitor_loop_watch_here(watch) == 0)
        CStallMonitor_loop_watch_bind(watch, slot)
        let epoll = CStallMonitor_epoll_create()
        try #require(epoll >= 0)
        defer { close(epoll) }

        // Another probe parked the watchdog; this loop's probe did not arm: its returns are noted,
        // never posted.
        CStallMonitor_wakeup_slot_park(slot)
        for _ in 0..<3 {
            _ = CStallMonitor_loop_watch_woke(watch)  // the watchdog's look takes the note
            #expect(CStallMonitor_epoll_wait_once(epoll, 0, 1) == 0)
            #expect(CStallMonitor_loop_watch_woke(watch) == 1, "the return is noted")
            #expect(posts(slot) == 0, "a return of a loop whose probe did not arm woke the watchdog")
        }

        // The loop's probe arms: the first return after the look posts, once.
        CStallMonitor_loop_watch_arm(watch, 1)
        _ = CStallMonitor_loop_watch_woke(watch)
        #expect(CStallMonitor_epoll_wait_once(epoll, 0, 1) == 0)
        #expect(CStallMonitor_epoll_wait_once(epoll, 0, 1) == 0)
        #expect(posts(slot) == 1, "an armed loop's return woke the watchdog")
        #expect(posts(slot) == 0, "one post per sleep")

        // Disarmed again (the watchdog woke): parked or not, no post.
        CStallMonitor_loop_watch_arm(watch, 0)
        CStallMonitor_wakeup_slot_park(slot)
        _ = CStallMonitor_loop_watch_woke(watch)
        #expect(CStallMonitor_epoll_wait_once(epoll, 0, 1) == 0)
        #expect(posts(slot) == 0)
        CStallMonitor_wakeup_slot_unpark(slot)
    }
}
