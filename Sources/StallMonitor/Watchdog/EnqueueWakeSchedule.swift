import CStallMonitor

/// When a probe of a queue whose enqueues wake the watchdog (the concurrency pool's enqueue
/// hook, the main queue's pass-through) looks next, and the watchdog sleep those enqueues end.
///
/// The queue is looked at every interval while work may be on its way, 2 ms after an enqueue
/// woke the watchdog (the work starts in the next moments), and only every
/// ``sleepingLookInterval`` once it has been quiet for a grace period (five intervals, at least
/// 50 ms: a job may start a little after it was queued), while the watchdog sleeps until the next
/// enqueue. A probe that can tell no job is on its way (its queue is *settled*: every worker
/// asleep in the kernel, every enqueue noted handed over) has it quiet at the first look that
/// finds it so instead. The owning probe says what keeps its queue from being quiet (a span, a
/// token) and which C flag its producers set.
///
/// A queue whose jobs start a moment after their enqueue (the pool) can have its enqueues post the
/// watchdog late (``ArmedSleep``): then the look they bring comes when the quick look would, and
/// takes its part, so a short job costs one wake-up, not two.
struct EnqueueWakeSchedule {
    /// The watchdog's sleep that an enqueue ends, once bound to its wake-up slot.
    private var sleep = ArmedSleep()
    /// Takes the producers' flag of a wake-up slot (true: an enqueue came since the last take).
    private let takeFlag: (Int32) -> Bool
    /// Arms (true) or disarms the producers for a wake-up slot.
    private let arm: (Int32, Bool) -> Void
    private let interval: UInt64
    private let enqueueGrace: UInt64
    /// How late enqueues post the watchdog (nil: at once).
    private let latePost: UInt64?
    /// The last look found the queue quiet: the watchdog may sleep until an enqueue wakes it.
    private(set) var quiet = false
    /// A producer woke the watchdog from a sleep before this look, at once (the next look comes
    /// soon).
    private(set) var producerWoke = false
    /// This look is the quick one after such a wake-up, or one a late post brought (it comes as
    /// late as the quick look would). A queue found settled here may be quiet
    /// even if this look took an enqueue's flag (set once its job is handed over): a job not
    /// handed over yet sets the flag later, which ends the sleep (``ArmedSleep``).
    private(set) var followsWake = false
    /// When a look last learned of an enqueue.
    private(set) var lastEnqueueSeen: UInt64 = 0

    /// A schedule for a probe looked at every `interval` (ns) while busy; `takeFlag` takes its
    /// producers' flag (`CStallMonitor_pool_enqueued`, `CStallMonitor_main_enqueued`), `arm` arms
    /// them (`CStallMonitor_pool_arm`, `CStallMonitor_main_arm`). With `postsLate`, the producers
    /// post the watchdog ``quickLookAfterWake`` after an enqueue (where they can), not at once.
    init(
        interval: UInt64, takeFlag: @escaping (Int32) -> Bool, arm: @escaping (Int32, Bool) -> Void,
        postsLate: Bool = false
    ) {
        self.interval = interval
        self.takeFlag = takeFlag
        self.arm = arm
        enqueueGrace = max(interval * 5, 50_000_000)
        latePost = postsLate ? min(interval, quickLookAfterWake) : nil
    }

    /// Whether an enqueue can wake the watchdog (the slot is bound).
    var canWake: Bool { sleep.slot != nil }

    /// A look begins: takes the producers' flag and what the last sleep learned. Returns whether
    /// an enqueue came since the last look (always, while no slot is bound: nothing tells), and
    /// when a producer woke the watchdog from a sleep (nil: none did).
    mutating func noteEnqueues(now: UInt64) -> (enqueued: Bool, wokeAt: UInt64?) {
        let (enqueuedBeforeSleep, woke, late) = sleep.take()
        let enqueued = (sleep.slot.map(takeFlag) ?? true) || enqueuedBeforeSleep
        // A late post's look is the quick look itself: no other follows it.
        followsWake = producerWoke || late
        producerWoke = woke != nil && !late
        if enqueued { lastEnqueueSeen = now }
        return (enqueued, woke)
    }

    /// The earliest moment a job found at a look at `now` may be dated from when its queue's
    /// producers did not tell of it (0: any). After a sleep by plan (the last look found the
    /// queue quiet) such a job (the sleep task a `Task.sleep`'s timer runs on the pool, a
    /// `DispatchQueue.main.asyncAfter` block) began at an unknown moment of the sleep: dated from
    /// its middle (a second, of 2 s), a few microseconds caught by the look would be a stall;
    /// dated from the last interval, a long one is short by the rest of the sleep (Limits).
    func earliestUnknownStart(now: UInt64) -> UInt64 { quiet ? now &- interval : 0 }

    /// Whether a look at `now` would end the grace period if the queue were settled (the probe
    /// then checks; the check costs it a read per worker): any look within the grace, its
    /// producers' flag taken (a producer notes an enqueue once its job is handed over).
    func settledEndsGrace(now: UInt64) -> Bool {
        sleep.slot != nil && now &- lastEnqueueSeen < enqueueGrace
    }

    /// The next look, once the look is done: after ``sleepingLookInterval`` when the queue is
    /// quiet (`idle`: nothing of the probe's own keeps it looked at, and either `settled`, no job
    /// can be on its way, or no enqueue in the grace period) and an enqueue can wake the watchdog;
    /// soon after such a wake-up; else after the interval.
    mutating func nextLook(now: UInt64, idle: Bool, settled: Bool = false) -> UInt64 {
        quiet = idle && sleep.slot != nil && (settled || now &- lastEnqueueSeen >= enqueueGrace)
        if quiet { return now &+ sleepingLookInterval }
        return now &+ (producerWoke ? min(interval, quickLookAfterWake) : interval)
    }

    /// The watchdog is about to sleep. The first time a `slot` is offered it is bound, and
    /// `watch` tells the producers about it (which notes an enqueue: the next look comes first).
    /// While the queue is quiet, parks the slot so that the next enqueue ends the sleep. Returns
    /// whether the watchdog may sleep.
    mutating func prepareToSleep(offering slot: Int32?, watch: (Int32) -> Void) -> Bool {
        if sleep.slot == nil, let slot {
            watch(slot)
            sleep.bind(slot, arm: arm, latePost: latePost)
            return true
        }
        guard quiet else { return true }
        return sleep.park(takingFlag: takeFlag)
    }

    /// The watchdog woke.
    mutating func wokeUp() {
        sleep.unpark()
    }
}
