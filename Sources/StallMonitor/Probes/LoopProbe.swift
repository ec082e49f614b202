/// One kind of loop, seen as loop-agnostic events. A probe tells a ``SpanTracker`` when the loop
/// entered or left a run, began a pass, is about to wait and woke (``SpanTracker/loopEntered(at:)``
/// and the others, called on the loop's own thread by a push probe), or when a span began and
/// ended (``SpanTracker/spanBegan(at:switches:)``, called on the watchdog by a pull probe, a
/// ``PolledLoopProbe``); it runs the monitor's arming step once on the loop's thread. The
/// watchdog, sampler, writer and report builder see only the tracker and the probe's ``kind``.
///
/// ``RunLoopProbe`` (CFRunLoop observers, push), ``ThreadPollingProbe`` (a loop thread looked
/// at from outside, e.g. a SwiftNIO event loop) and ``MainQueueProbe`` (the Dispatch main queue,
/// a different worker thread per span) are the implementations.
protocol LoopProbe: AnyObject, Sendable {
    /// The loop kind reports and summaries name (`runLoop`, `nioEventLoop`, `mainActor`).
    var kind: String { get }

    /// Starts feeding `tracker` and runs `arm` once on the loop's thread: at once when called
    /// there, otherwise the next time the loop runs.
    func attach(to tracker: SpanTracker, arm: @escaping @Sendable () -> Void)

    /// Stops feeding the tracker. An event already being delivered may still arrive.
    func detach()

    /// Whether the loop has been seen running since the probe attached (its thread armed and, for
    /// a push probe, at least one span began). A loop that has not after a few seconds is said.
    func hasRun(tracker: SpanTracker, armed: Bool) -> Bool

    /// Whether the loop's thread changes from span to span (the Dispatch main queue): `arm` then
    /// arms each new thread the probe meets (``MonitoredThread/armWorker(signal:report:)``), and
    /// each span carries its thread (``SpanTracker/spanThread``).
    var threadPerSpan: Bool { get }

    /// Whether thread `tid` runs the loop's work now, `armedTID` being the thread the monitor
    /// armed for this probe (0: none yet). A loop whose thread changes from span to span knows
    /// the thread of its current span; the others are known by their armed thread.
    func runsLoopWork(on tid: Int32, armedTID: Int32) -> Bool

    /// The loop this probe watches one slot of, when several probes share one loop (the
    /// concurrency pool: a slot per busy worker). The monitor lists it once, keeps no loop time of
    /// its own for it, and asks it what concerns the whole loop. Nil: the probe's loop is its own.
    var sharedLoop: (any SharedLoop)? { get }

    /// Workers armed by the probe that several monitored threads share (the slots of one
    /// concurrency pool); nil: each monitored thread keeps its own.
    var armedWorkers: Locked<[Int32: MonitoredThread.ArmedWorker]>? { get }

    /// Whether the loop runs Swift tasks (the concurrency pool, the MainActor): its samples are
    /// expected to carry async callers, and a report says why they do not.
    var runsTasks: Bool { get }

    /// The thread pointer of thread `tid` when the probe knows it (on the watchdog thread).
    func threadPointer(of tid: Int32) -> UInt?

    /// Whether the probe stamps its loop's events with the counter clock where it is usable
    /// (``SpanTracker/loopWillWait(ticks:)`` and the others): its tracker then gets the counter's rate.
    var stampsWithCounter: Bool { get }
}

extension LoopProbe {
    var threadPerSpan: Bool { false }
    func runsLoopWork(on tid: Int32, armedTID: Int32) -> Bool { armedTID == tid }
    var sharedLoop: (any SharedLoop)? { nil }
    var armedWorkers: Locked<[Int32: MonitoredThread.ArmedWorker]>? { nil }
    var runsTasks: Bool { false }
    func threadPointer(of tid: Int32) -> UInt? { nil }
    var stampsWithCounter: Bool { false }

    func hasRun(tracker: SpanTracker, armed: Bool) -> Bool {
        armed && tracker.currentSpan().sequence > 0
    }
}

/// How often a pull probe whose loop can wake the watchdog is looked at while that loop sleeps
/// (nanoseconds): a look for work that reached it without waking the watchdog (a job run on the
/// pool by a custom executor, a loop whose host replaced the shim's hooks).
let sleepingLookInterval: UInt64 = 2_000_000_000

/// How soon a pull probe looks again after its loop's new work woke the watchdog (nanoseconds, or
/// the probe's interval if shorter): the work starts in the next moments, and a span is dated to
/// half the time between two looks.
let quickLookAfterWake: UInt64 = 2_000_000

/// A probe the watchdog drives (pull): it looks at the loop's thread from outside at a steady
/// interval and feeds the tracker from the watchdog thread.
protocol PolledLoopProbe: LoopProbe {
    /// Looks at the loop at `now` (on the watchdog thread) and updates the tracker; returns when
    /// it wants to look again (nil: never, the loop is gone).
    func poll(now: UInt64) -> UInt64?

    /// The watchdog is about to sleep on `wakeup` (after every probe's look). A probe whose loop
    /// can wake the watchdog when work arrives (the concurrency pool's enqueue hook) arms that
    /// now; it returns false when work arrived since its last look (the watchdog looks again
    /// instead of sleeping).
    func prepareToSleep(on wakeup: WakeupSignal) -> Bool

    /// The watchdog woke at `now` (signalled or at its deadline): the probe disarms its wake-up.
    func wokeUp(at now: UInt64)

    /// The watchdog is ending: closes what the probe keeps open (on the watchdog thread).
    func finishPolling()
}

extension PolledLoopProbe {
    func prepareToSleep(on wakeup: WakeupSignal) -> Bool { true }
    func wokeUp(at now: UInt64) {}
}
