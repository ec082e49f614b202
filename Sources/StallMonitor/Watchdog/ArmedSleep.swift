import CStallMonitor

/// A probe's part in a watchdog sleep that its producers can end (the pool's enqueue hook, a
/// loop's return from its wait), on the watchdog's C wake-up slot.
///
/// Arming the probe's producers, parking the slot, then taking the producers' flag is one side of
/// a Dekker pair on sequentially consistent atomics; a producer sets the flag, then posts the slot
/// if its probe armed it and it is parked. Either the producer sees both and posts it, or the
/// probe sees the flag and the watchdog does not sleep. A producer whose probe did not arm never
/// posts: the watchdog may be parked for another probe's sake (an idle pool beside busy event
/// loops), and each return of a busy loop would end its sleep, thousands of times a second.
///
/// A probe whose producers' work starts a moment after their note (the pool's jobs) gives the slot
/// a late post when it binds it: those producers then arm the slot's timerfd instead of posting
/// it, the watchdog wakes a moment later, and its one look finds a short job done
/// (`wakeup_late_post.c`).
struct ArmedSleep {
    /// The watchdog's wake-up slot once bound (nil: the probe cannot be woken and is looked at
    /// every interval).
    private(set) var slot: Int32?
    /// Arms (true) or disarms (false) the probe's producers for the slot.
    private var arm: (Int32, Bool) -> Void = { _, _ in }
    private var armed = false
    private var parkedAt: UInt64 = 0
    /// When a producer posted the slot during the last sleep.
    private var wokenAt: UInt64?
    /// The producers' flag was set when the slot was parked (the sleep was not taken).
    private var producedBeforeSleep = false
    /// The slot has a late post (``bind(_:arm:latePost:)``).
    private var hasLatePost = false
    /// The last sleep was ended by the late post.
    private var wokenLate = false

    /// Binds the watchdog's wake-up slot; `arm` arms or disarms the probe's producers for it. With
    /// `latePost` (ns), producers that post late arm the slot's timer to expire that long after
    /// their note instead of posting it (where the slot has a timer).
    mutating func bind(_ slot: Int32, arm: @escaping (Int32, Bool) -> Void, latePost: UInt64? = nil) {
        self.slot = slot
        self.arm = arm
        if let latePost { hasLatePost = CStallMonitor_wakeup_late_post_enable(slot, latePost) == 0 }
    }

    /// Parks the slot, then takes the producers' flag with `takeFlag`; returns whether the
    /// watchdog may sleep (true without a slot: nothing to arm).
    mutating func park(takingFlag takeFlag: (Int32) -> Bool) -> Bool {
        guard let slot else { return true }
        parkedAt = CStallMonitor_monotonic_ns()
        arm(slot, true)
        CStallMonitor_wakeup_slot_park(slot)
        armed = true
        producedBeforeSleep = takeFlag(slot)
        return !producedBeforeSleep
    }

    /// The watchdog woke: unparks the slot and notes whether a producer posted it during this
    /// sleep (not when woken by time or by something else), and whether late (a late post not
    /// fired yet is cancelled: the watchdog is awake).
    mutating func unpark() {
        guard armed, let slot else { return }
        arm(slot, false)
        CStallMonitor_wakeup_slot_unpark(slot)
        armed = false
        let posted = CStallMonitor_wakeup_slot_posted_at(slot)
        wokenAt = posted >= parkedAt ? posted : nil
        wokenLate = hasLatePost && CStallMonitor_wakeup_late_post_taken(slot) != 0 && wokenAt != nil
    }

    /// Takes what the last park learned: whether the producers' flag was already set (the sleep
    /// was not taken), when a producer woke the sleep (its note), and whether its late post did
    /// (the look comes a moment after the note).
    mutating func take() -> (producedBeforeSleep: Bool, wokenAt: UInt64?, late: Bool) {
        defer {
            producedBeforeSleep = false
            wokenAt = nil
            wokenLate = false
        }
        return (producedBeforeSleep, wokenAt, wokenLate)
    }
}
