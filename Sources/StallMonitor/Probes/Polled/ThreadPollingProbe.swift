import CStallMonitor
import Synchronization

/// The pull probe: a loop that calls nobody back (a SwiftNIO event loop) is looked at from the
/// watchdog, every `interval`, without disturbing its thread.
///
/// - **Idle** while its thread is blocked in one of the loop's idle syscalls (`epoll_wait`), read
///   from `/proc/self/task/<tid>/syscall`.
/// - **Busy** otherwise: running, or blocked in anything else (a `sleep`, a file read, a lock in
///   a handler). A span begins at the loop's last return from its wait, which the shim's
///   `epoll_wait` notes on the loop's thread (below). For a loop that waits some other way, the
///   start is estimated from the thread's scheduler statistics: a thread that has not slept since
///   the last idle look has been runnable since it woke, so it woke its runnable time ago (exact
///   for CPU-bound stalls); one that slept again in between (a blocking call) woke somewhere
///   between the idle look and that, and the middle is taken.
/// - **Progress**: while busy, the probe queues a token on the loop's own task queue; a loop
///   runs its tasks whenever it gets back from its handlers, so the token's run time (read on the
///   loop's thread) ends the span there, precisely. A loop saturated with short work acks every
///   token within a tick and never stalls; a stuck loop runs none.
///
/// - **Sleep**: a loop found idle, with no wait returned since the last look, lets the watchdog
///   sleep. The C shim defines `epoll_wait` (weakly, a pass-through to `epoll_pwait`), so a loop
///   linked into the same executable (NIOPosix) notes each return from its wait on its watch, and
///   the first return after the watchdog parked wakes it; the probe then looks every interval
///   until the loop is idle again, and dates a span from that wake-up (the loop was in its wait
///   until just before). A loop whose thread never entered that `epoll_wait` (a host or sanitizer
///   runtime with its own) is looked at every interval, as before; a sleeping one every 2 s.
///
/// The interval bounds how early a span that blocks at once can be dated (half an interval at
/// most).
final class ThreadPollingProbe: PolledLoopProbe, @unchecked Sendable {
    let kind: String
    private let loop: PolledLoop
    private let interval: UInt64
    private let detached = Atomic<Bool>(false)
    /// What tasks on the loop's thread write: its id, when the last token ran.
    private let onLoop = LoopThreadFacts()
    private let token: @Sendable () -> Void

    // Watchdog-thread state (and `tracker`, set by attach before the watchdog starts).
    private var tracker: SpanTracker?
    private var files: ThreadProcFiles?
    /// The last look that found the loop idle, with the thread's voluntary switches and runnable time then.
    private var lastIdle: (at: UInt64, switches: UInt64?, runnable: UInt64?)?
    /// When the outstanding token was queued.
    private var tokenQueuedAt: UInt64?
    private var spanOpen = false
    /// The loop's thread is gone or the loop refuses work: nothing more to look at.
    private var finished = false
    /// The C shim's watch of the loop's waits (nil: none free, or given back at the end), and the
    /// watchdog's sleeps that the loop's return ends, once the watch is bound to its slot.
    private var wakeWatch: Int32?
    private var sleep = ArmedSleep()
    /// The loop's thread's registration as one that must not block (see ``BlockingCallDetector``).
    private let mustNotBlock = BlockingLoopRegistration()
    /// The last look found the loop idle and not woken since the look before.
    private var quiet = false
    /// A producer woke the watchdog from a sleep before this look (the next look comes soon).
    private var producerWoke = false
    /// Whether the loop's thread waits in the shim's `epoll_wait` (``noteWhetherReturnsAreTimed()``).
    private var notesReturns = false

    init(_ loop: PolledLoop, interval: UInt64) {
        self.kind = loop.kind
        self.loop = loop
        self.interval = max(interval, 1_000_000)
        let facts = onLoop
        token = { facts.tokenRanAt.store(CStallMonitor_monotonic_ns(), ordering: .releasing) }
        let watch = CStallMonitor_loop_watch_acquire()
        wakeWatch = watch >= 0 ? watch : nil
    }

    deinit {
        if let wakeWatch { CStallMonitor_loop_watch_release(wakeWatch) }
    }

    func attach(to tracker: SpanTracker, arm: @escaping @Sendable () -> Void) {
        self.tracker = tracker
        let facts = onLoop
        let watch = wakeWatch
        let mustNotBlock = mustNotBlock
        _ = loop.execute {
            arm()
            if let watch { _ = CStallMonitor_loop_watch_here(watch) }
            mustNotBlock.registerCallingThread()
            // The arming task ran: the loop was at its task queue now, a point of progress to
            // date a span from when the loop is busy at the first look.
            facts.armedAt = (
                CStallMonitor_monotonic_ns(), CStallMonitor_thread_voluntary_switches(),
                SchedStat.callingThread()?.runnable
            )
            facts.tid.store(CStallMonitor_gettid(), ordering: .releasing)
        }
    }

    func detach() {
        guard !detached.exchange(true, ordering: .sequentiallyConsistent) else { return }
        mustNotBlock.release()
        loop.detach()
    }

    func hasRun(tracker: SpanTracker, armed: Bool) -> Bool { armed }

    func finishPolling() {
        files = nil
        if let wakeWatch { CStallMonitor_loop_watch_release(wakeWatch) }
        wakeWatch = nil
        notesReturns = false
    }

    func prepareToSleep(on wakeup: WakeupSignal) -> Bool {
        if sleep.slot == nil, let wakeWatch, let slot = wakeup.slot {
            CStallMonitor_loop_watch_bind(wakeWatch, slot)  // counts as woken: the next look comes first
            sleep.bind(slot) { _, armed in CStallMonitor_loop_watch_arm(wakeWatch, armed ? 1 : 0) }
            return true
        }
        guard quiet, let wakeWatch else { return true }
        return sleep.park { _ in CStallMonitor_loop_watch_woke(wakeWatch) != 0 }
    }

    func wokeUp(at now: UInt64) {
        sleep.unpark()
    }

    /// Whether the loop returned from its wait since the last look. After a sleep it ended, the
    /// loop was idle until the wake-up was posted (it posts on its first return), so the last
    /// idle look moves there, unless the returns are timed (the span starts at the last one).
    private func takeWake() -> Bool {
        let (wokeBeforeSleep, wokeFromSleep, _) = sleep.take()
        let returned =
            (wakeWatch.map { sleep.slot != nil && CStallMonitor_loop_watch_woke($0) != 0 } ?? true) || wokeBeforeSleep
        producerWoke = wokeFromSleep != nil
        if returned, !notesReturns, let posted = wokeFromSleep, let idle = lastIdle, idle.at < posted {
            lastIdle = (posted, idle.switches, idle.runnable)
        }
        return returned
    }

    /// The next look: none while the loop idles unwoken and can wake the watchdog (its thread
    /// waits in the shim's `epoll_wait`, whose every return posts the watchdog's slot once it is
    /// parked: new events, a scheduled task due, a wake-up of the loop, its shutdown), else after
    /// the interval.
    private func nextLook(now: UInt64, idle: Bool, returned: Bool) -> UInt64? {
        quiet =
            idle && !returned && !spanOpen && tokenQueuedAt == nil && sleep.slot != nil && notesReturns
        return quiet ? nil : now &+ lookInterval
    }

    /// The interval to the next look while the loop is not let sleep: short once after a wake-up
    /// its loop's work caused (that work starts in the next moments).
    private var lookInterval: UInt64 {
        producerWoke ? min(interval, quickLookAfterWake) : interval
    }

    func poll(now: UInt64) -> UInt64? {
        let wasQuiet = quiet
        quiet = false
        producerWoke = false
        guard !finished, !detached.load(ordering: .relaxed), let tracker else { return nil }
        let tid = onLoop.tid.load(ordering: .acquiring)
        guard tid != 0 else { return now &+ interval }
        if files == nil {
            files = ThreadProcFiles(tid: tid)
            lastIdle = onLoop.armedAt
        }
        guard let files else { return nil }
        noteWhetherReturnsAreTimed()
        let returned = takeWake()
        // Quiet at the last look: idle in the shim's epoll_wait, whose every return is noted (and
        // posts the watchdog once it is parked). No return since, so it waits still: a look that
        // another probe's wake-up brought reads no `/proc` file (a thread's syscall file costs
        // the kernel tens of microseconds), and the loop was idle at this look.
        if wasQuiet, !returned {
            lastIdle = (now, nil, nil)
            quiet = true
            return nil
        }
        let state = files.syscallState()
        if case .unknown = state {
            // The thread has exited (the loop shut down): a span in progress ends here.
            finish(tracker, at: now)
            return nil
        }
        var idle = false
        if case .inSyscall(let number, _, _) = state { idle = loop.idleSyscalls.contains(number) }

        if let queued = tokenQueuedAt {
            let ran = onLoop.tokenRanAt.load(ordering: .acquiring)
            guard ran >= queued else { return now &+ lookInterval }  // not back at its tasks yet
            tokenQueuedAt = nil
            if spanOpen {
                tracker.spanEnded(at: ran)
                spanOpen = false
            }
            if idle {
                noteIdle(now: now, files: files)
            } else {
                // Busy again (or still): a new span from when the loop last got to its tasks.
                lastIdle = nil
                tracker.spanBegan(at: ran, switches: notesReturns ? 0 : files.voluntarySwitches() ?? 0)
                spanOpen = true
                queueToken(tracker, now: now)
            }
            return now &+ lookInterval
        }
        if idle {
            if spanOpen {  // only when no token could be queued
                tracker.spanEnded(at: now)
                spanOpen = false
            }
            noteIdle(now: now, files: files)
            return nextLook(now: now, idle: true, returned: returned)
        }
        if !spanOpen, let lastIdle {
            if let returned = lastReturn(after: lastIdle.at) {
                tracker.spanBegan(at: min(returned, now), switches: 0)
            } else if notesReturns {
                // The return's time is not stored yet (the thread was preempted right after the
                // syscall): the idle look kept no statistics, so none are read for the estimate.
                let start = Self.estimatedWake(idleLook: lastIdle, now: now, switches: nil, runnable: nil)
                tracker.spanBegan(at: start, switches: 0)
            } else {
                let switches = files.voluntarySwitches()
                let start = Self.estimatedWake(
                    idleLook: lastIdle, now: now, switches: switches, runnable: files.runnableNanos())
                tracker.spanBegan(at: start, switches: switches ?? 0)
            }
            spanOpen = true
        }
        // Without a point of progress yet (the arming task's facts unreadable), the token's run
        // is the first; spans begin from there.
        queueToken(tracker, now: now)
        return now &+ lookInterval
    }

    /// Whether the loop's thread has waited in the shim's `epoll_wait`, which times each return
    /// (a pull probe's span is never suspended, so its start's switch count is not needed
    /// either). The shim's flag is set once and never cleared: read at each look until it is.
    private func noteWhetherReturnsAreTimed() {
        guard !notesReturns, let wakeWatch else { return }
        notesReturns = CStallMonitor_loop_watch_entered(wakeWatch) != 0
    }

    /// When the loop last returned from its wait, if that was after `idleLook` (a look that found
    /// it waiting); nil when its returns are not timed, or when the return's time is not stored yet
    /// (the thread was preempted between the syscall's return and the store): the estimate then.
    private func lastReturn(after idleLook: UInt64) -> UInt64? {
        guard notesReturns, let wakeWatch else { return nil }
        let returned = CStallMonitor_loop_watch_returned_at(wakeWatch)
        return returned > idleLook ? returned : nil
    }

    /// When a loop found busy at `now` most likely woke, after `idleLook` found it waiting.
    static func estimatedWake(
        idleLook: (at: UInt64, switches: UInt64?, runnable: UInt64?), now: UInt64,
        switches: UInt64?, runnable: UInt64?
    ) -> UInt64 {
        guard now > idleLook.at else { return now }
        var latest = now
        if let before = idleLook.runnable, let after = runnable, after >= before {
            latest = max(idleLook.at, now &- min(after - before, now))
            // Not slept since: runnable all the time since it woke, which is then exact.
            if let before = idleLook.switches, let after = switches, before == after { return latest }
        }
        // It slept again since it woke (a blocking call) or nothing is known: the middle of the
        // interval it woke in.
        return idleLook.at + (latest - idleLook.at) / 2
    }

    private func noteIdle(now: UInt64, files: ThreadProcFiles) {
        // The loop's returns from its wait are timed: the next busy look needs no statistics.
        if notesReturns {
            lastIdle = (now, nil, nil)
            return
        }
        // A thread that did not run since the last idle look kept its switch count too.
        let runnable = files.runnableNanos()
        if let lastIdle, lastIdle.runnable != nil, lastIdle.runnable == runnable {
            self.lastIdle = (now, lastIdle.switches, runnable)
        } else {
            lastIdle = (now, files.voluntarySwitches(), runnable)
        }
    }

    private func queueToken(_ tracker: SpanTracker, now: UInt64) {
        guard tokenQueuedAt == nil else { return }
        let queuedAt = CStallMonitor_monotonic_ns()
        if loop.execute(token) {
            tokenQueuedAt = queuedAt
        } else {
            finish(tracker, at: now)  // the loop no longer accepts work: it is shutting down
        }
    }

    private func finish(_ tracker: SpanTracker, at now: UInt64) {
        if spanOpen { tracker.spanEnded(at: now) }
        spanOpen = false
        finished = true
        files = nil
    }
}

/// What a probe's tasks write on the loop's thread.
private final class LoopThreadFacts: @unchecked Sendable {
    /// The loop thread's kernel id, stored by the arming task.
    let tid = Atomic<Int32>(0)
    /// When the arming task ran, with the thread's voluntary switches and runnable time then;
    /// written before ``tid`` is stored (release), read after it is loaded (acquire).
    var armedAt: (at: UInt64, switches: UInt64?, runnable: UInt64?)?
    /// When the last token ran (monotonic ns).
    let tokenRanAt = Atomic<UInt64>(0)
}
