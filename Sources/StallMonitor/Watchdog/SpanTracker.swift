import CStallMonitor
import Synchronization

/// The awake-span state of one monitored thread: written by that thread (O(1), lock-free, no
/// allocation; a syscall only to wake a parked watchdog and one `getrusage` when the loop is
/// awake again after more than the grace), read by the watchdog.
///
/// Its probe (``LoopProbe``) feeds it loop events. A span opens when the loop wakes or enters
/// its outermost run (a run loop's `afterWaiting` / outermost `entry`). Waiting and leaving the
/// outermost run (`beforeWaiting` / outermost `exit`) only *suspend* it: a span suspended for
/// longer than ``reentryGrace`` ended when it was suspended, but one that is awake again sooner
/// goes on, and so does one whose thread never
/// gave up the CPU voluntarily since the span began (it was preempted between two passes on a
/// busy machine, it did not go idle). That keeps two things from cutting a
/// busy span short: a wait that returns at once because work is pending (a congested loop), and
/// `RunLoop.run()` leaving and re-entering the CF loop after every handled source. Nested runs
/// of the same loop neither restart nor end the enclosing span.
///
/// One exception to both rules: when code on the thread declared during the span that the loop
/// would have gone idle and is kept awake only by deferred idle-time work
/// (`CStallMonitor_note_loop_idle_yield`, called by ``IdleWorkQueue``), the span ends at the
/// next suspension however soon the loop is awake again.
///
/// A probe may stamp its events with the counter clock instead of the monotonic one
/// (``loopWillWait(ticks:)`` and the others, when the tracker has a ``counterRate``): a busy loop
/// then pays a counter read per wait and wake (about 9 ns where the monotonic clock costs 20 or
/// more), and the monotonic clock is read only when a span begins or its suspension outlasted the
/// grace. A suspension stamped so is converted to the monotonic clock from the span's start, where
/// both clocks were read: the conversion's error is the rate's (parts per million) of the span's
/// length, never of the time since the rate was measured.
final class SpanTracker: Sendable {
    typealias Phase = SpanState.Phase

    /// The current span and its phase, packed (``SpanState`` reads and makes the word: an atomic
    /// of the plain word costs nothing over it in a debug build, an atomic of the struct does).
    private let state = Atomic<UInt64>(SpanState.initial.rawValue)
    let spanStart = Atomic<UInt64>(0)
    /// The suspension's time, when it was stamped with the monotonic clock (``suspendedTicks`` 0).
    let suspendedAt = Atomic<UInt64>(0)
    /// The counter when the current span began (0: the tracker has no ``counterRate``).
    let spanStartTicks = Atomic<UInt64>(0)
    /// The counter when the span was suspended, for a suspension stamped with it; 0: it was
    /// stamped with the monotonic clock (``suspendedAt``).
    let suspendedTicks = Atomic<UInt64>(0)
    /// Nanoseconds per counter tick as a 32.32 fixed-point number (`CStallMonitor_counter_rate`);
    /// 0: every event comes with a monotonic time.
    let counterRate: UInt64
    /// ``reentryGrace`` in counter ticks.
    private let reentryGraceTicks: UInt64
    /// The monotonic clock, read where a counter-stamped event needs the time (replaced in tests).
    let monotonicNow: @Sendable () -> UInt64
    /// The thread's voluntary context switches when the current span began.
    let spanStartSwitches = Atomic<UInt64>(0)
    /// The kernel id of the thread that runs the current span, for a loop whose thread changes
    /// from span to span (the Dispatch main queue); 0: the loop's own (armed) thread.
    let spanThread = Atomic<Int32>(0)
    /// The calling thread's voluntary context switches (replaced in tests).
    let voluntarySwitches: @Sendable () -> UInt64
    /// The idle yields declared on the thread when the current span began.
    let spanStartIdleYields = Atomic<UInt64>(0)
    /// Whether the current suspension follows an idle yield declared during the span.
    let suspendedAfterIdleYield = Atomic<Bool>(false)
    /// The calling thread's declared idle yields (replaced in tests).
    let idleYields: @Sendable () -> UInt64

    // Pass accounting, touched only by the monitored thread while a span is open.
    let passes = Atomic<Int>(0)
    let passStart = Atomic<UInt64>(0)
    let longestPass = Atomic<UInt64>(0)
    let depth = Atomic<Int>(0)

    /// Total length of the spans that ended (every one, short ones too), in nanoseconds, and the
    /// sequence of the last span added to it: the loop's awake time, for its utilisation metric.
    let awakeEnded = Atomic<UInt64>(0)
    let awakeEndedThrough = Atomic<UInt64>(0)

    /// The last spans longer than `publishAfter` that ended, for the watchdog.
    let endedSpans = EndedSpanLog()

    /// Spans shorter than this are never tracked by the watchdog, so their end is not published.
    let publishAfter: UInt64
    /// How long an outermost `exit` may be followed by `entry` and still continue the span.
    let reentryGrace: UInt64
    /// The last span during which the host declared long work (`expectLongWork`).
    let expectedLongWorkSequence = Atomic<UInt64>(0)

    /// The loop's mode now (1-based index into ``modeNames``; 0 when unknown), set by the probe
    /// on the loop's thread, read by the watchdog with the span: nobody takes the loop's lock.
    let modeIndex = Atomic<Int>(0)
    /// Names of the modes seen, interned by the probe when a new one appears (rare).
    private let modeNames = Locked<[String]>([])

    /// Set by the watchdog before it sleeps without a deadline; cleared by whoever wakes it.
    let watchdogParked = Atomic<Bool>(false)
    let wakeup: WakeupSignal

    init(
        publishAfter: UInt64, reentryGrace: UInt64, wakeup: WakeupSignal, counterRate: UInt64 = 0,
        monotonicNow: @escaping @Sendable () -> UInt64 = { CStallMonitor_monotonic_ns() },
        voluntarySwitches: @escaping @Sendable () -> UInt64 = { CStallMonitor_thread_voluntary_switches() },
        idleYields: @escaping @Sendable () -> UInt64 = { CStallMonitor_loop_idle_yields() }
    ) {
        self.publishAfter = publishAfter
        self.reentryGrace = reentryGrace
        self.counterRate = counterRate
        self.monotonicNow = monotonicNow
        reentryGraceTicks =
            counterRate == 0 ? 0 : UInt64(min(Double(reentryGrace) * 4_294_967_296 / Double(counterRate), 0x1p62))
        self.wakeup = wakeup
        self.voluntarySwitches = voluntarySwitches
        self.idleYields = idleYields
    }

    // MARK: Loop events, on the monitored thread (a probe turns its loop's activities into these)

    /// The loop entered a run (the outermost one, or one nested in a callout).
    @inline(__always)
    func loopEntered(at now: UInt64) {
        entered(at: now, ticks: 0)
    }

    /// ``loopEntered(at:)`` stamped with the counter clock (the tracker has a ``counterRate``).
    @inline(__always)
    func loopEntered(ticks: UInt64) {
        entered(at: 0, ticks: ticks)
    }

    @inline(__always)
    private func entered(at now: UInt64, ticks: UInt64) {
        // The loop's thread is the only writer: a load and a store, not a locked compare-and-swap
        // (an overflow-checked atomic add is one), at every run's entry and exit.
        let level = depth.load(ordering: .relaxed) &+ 1
        depth.store(level, ordering: .relaxed)
        if level == 1 || !SpanState(rawValue: state.load(ordering: .relaxed)).isOpen {
            resumeOrBegin(at: now, ticks: ticks)
        }
    }

    /// A new pass of the loop began (its timers and sources are next). `now` may come from the
    /// coarse clock, a tick behind the one that began the span: a pass then measures up to a tick
    /// long or short, never negative.
    @inline(__always)
    func passBegan(at now: UInt64) {
        guard SpanState(rawValue: state.load(ordering: .relaxed)).isOpen else { return }
        let passBegan = passStart.load(ordering: .relaxed)
        if now > passBegan, now &- passBegan > longestPass.load(ordering: .relaxed) {
            longestPass.store(now &- passBegan, ordering: .relaxed)
        }
        passStart.store(now, ordering: .relaxed)
        // The loop's thread is the only writer: a load and a store, not a locked add.
        passes.store(passes.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }

    /// The loop is about to wait for events.
    @inline(__always)
    func loopWillWait(at now: UInt64) {
        suspend(at: now, ticks: 0)
    }

    /// ``loopWillWait(at:)`` stamped with the counter clock (the tracker has a ``counterRate``).
    @inline(__always)
    func loopWillWait(ticks: UInt64) {
        suspend(at: 0, ticks: ticks)
    }

    /// The loop woke from a wait.
    @inline(__always)
    func loopWoke(at now: UInt64) {
        resumeOrBegin(at: now, ticks: 0)
    }

    /// ``loopWoke(at:)`` stamped with the counter clock (the tracker has a ``counterRate``).
    @inline(__always)
    func loopWoke(ticks: UInt64) {
        resumeOrBegin(at: 0, ticks: ticks)
    }

    /// The loop left a run.
    @inline(__always)
    func loopExited(at now: UInt64) {
        exited(at: now, ticks: 0)
    }

    /// ``loopExited(at:)`` stamped with the counter clock (the tracker has a ``counterRate``).
    @inline(__always)
    func loopExited(ticks: UInt64) {
        exited(at: 0, ticks: ticks)
    }

    @inline(__always)
    private func exited(at now: UInt64, ticks: UInt64) {
        let level = depth.load(ordering: .relaxed) &- 1
        depth.store(max(level, 0), ordering: .relaxed)
        if level <= 0 {
            suspend(at: now, ticks: ticks)
        } else if !SpanState(rawValue: state.load(ordering: .relaxed)).isOpen {
            resumeOrBegin(at: now, ticks: ticks)  // back in the enclosing callout: awake again
        }
    }

    /// The loop now runs in mode `index` (from ``internMode(_:)``; 0: unknown).
    @inline(__always)
    func noteMode(_ index: Int) {
        modeIndex.store(index, ordering: .relaxed)
    }

    /// The index of mode `name` for ``noteMode(_:)``, adding it the first time (takes a lock and
    /// may allocate: call it when a mode not seen before appears, not per event).
    func internMode(_ name: String) -> Int {
        modeNames.withLock { names in
            if let index = names.firstIndex(of: name) { return index + 1 }
            names.append(name)
            return names.count
        }
    }

    /// The name of the loop's mode now, when known. For the watchdog.
    func currentModeName() -> String? {
        let index = modeIndex.load(ordering: .relaxed)
        guard index > 0 else { return nil }
        return modeNames.withLock { index <= $0.count ? $0[index - 1] : nil }
    }

    /// The loop is about to wait, or left its outermost run: the span is suspended. It ends there
    /// unless the loop is awake again within the grace (the wait returned at once because work
    /// was pending, or `RunLoop.run()` re-entered the CF loop). `ticks` 0: `now` is the time;
    /// otherwise the counter's reading is the time and `now` is not used.
    @inline(__always)
    private func suspend(at now: UInt64, ticks: UInt64) {
        let current = SpanState(rawValue: state.load(ordering: .relaxed))
        guard current.isOpen else { return }
        suspendedTicks.store(ticks, ordering: .relaxed)
        if ticks == 0 { suspendedAt.store(now, ordering: .relaxed) }
        suspendedAfterIdleYield.store(idleYields() != spanStartIdleYields.load(ordering: .relaxed), ordering: .relaxed)
        // Releasing (a plain store on x86, not an exchange): the watchdog reads the state with
        // an acquiring load at least; only `begin`, which may wake a parked watchdog, needs the
        // sequentially consistent store that pairs with `watchdogParked`.
        state.store(current.with(.suspended).rawValue, ordering: .releasing)
    }

    /// The loop is awake (again) at `now`, or at the counter's reading `ticks` when that is not 0
    /// (the monotonic clock is then read only when the span begins or its suspension outlasted the
    /// grace).
    @inline(__always)
    private func resumeOrBegin(at now: UInt64, ticks: UInt64) {
        let current = SpanState(rawValue: state.load(ordering: .relaxed))
        switch current.phase {
        case .open:
            return
        case .suspended:
            if ticks != 0, !suspendedAfterIdleYield.load(ordering: .relaxed) {
                let suspendedTicks = suspendedTicks.load(ordering: .relaxed)
                if suspendedTicks != 0, ticks &- suspendedTicks <= reentryGraceTicks {
                    state.store(current.with(.open).rawValue, ordering: .releasing)
                    return
                }
            }
            let now = ticks == 0 ? now : monotonicNow()
            let suspended = suspensionTime()
            if suspendedAfterIdleYield.load(ordering: .relaxed) {
                // The loop would have slept; deferred idle work kept it awake: a new span.
                publishEnd(sequence: current.sequence, at: suspended)
                begin(after: current, at: now, switches: voluntarySwitches(), ticks: ticks)
                return
            }
            if now &- suspended <= reentryGrace {
                state.store(current.with(.open).rawValue, ordering: .releasing)
                return
            }
            // Longer than the grace, but if the thread never slept since the span began, the
            // pause was a preemption (a busy machine), not the loop going idle.
            let switches = voluntarySwitches()
            if switches == spanStartSwitches.load(ordering: .relaxed) {
                state.store(current.with(.open).rawValue, ordering: .sequentiallyConsistent)
                return
            }
            publishEnd(sequence: current.sequence, at: suspended)
            begin(after: current, at: now, switches: switches, ticks: ticks)
        default:
            let now = ticks == 0 ? now : monotonicNow()
            begin(after: current, at: now, switches: voluntarySwitches(), ticks: ticks)
        }
    }

    /// When the current span was suspended, on the monotonic clock: a suspension stamped with the
    /// counter is converted from the span's start.
    @inline(__always)
    private func suspensionTime() -> UInt64 {
        let ticks = suspendedTicks.load(ordering: .relaxed)
        guard ticks != 0 else { return suspendedAt.load(ordering: .relaxed) }
        let start = spanStart.load(ordering: .relaxed)
        let startTicks = spanStartTicks.load(ordering: .relaxed)
        guard startTicks != 0, ticks > startTicks else { return start }
        let product = (ticks &- startTicks).multipliedFullWidth(by: counterRate)
        return start &+ (product.high << 32 | product.low >> 32)
    }

    /// A span begins at `now`; `ticks` is the counter's reading taken with it (0: none, read now
    /// when the tracker has a ``counterRate``).
    @inline(__always)
    private func begin(after current: SpanState, at now: UInt64, switches: UInt64, ticks: UInt64 = 0) {
        spanStart.store(now, ordering: .relaxed)
        if counterRate != 0 {
            spanStartTicks.store(ticks != 0 ? ticks : CStallMonitor_counter_ticks(), ordering: .relaxed)
        }
        spanStartSwitches.store(switches, ordering: .relaxed)
        spanStartIdleYields.store(idleYields(), ordering: .relaxed)
        passStart.store(now, ordering: .relaxed)
        longestPass.store(0, ordering: .relaxed)
        passes.store(1, ordering: .relaxed)
        state.store(current.nextOpen().rawValue, ordering: .sequentiallyConsistent)
        if watchdogParked.load(ordering: .sequentiallyConsistent),
            watchdogParked.exchange(false, ordering: .sequentiallyConsistent)
        {
            wakeup.signal()
        }
    }

    @inline(__always)
    private func publishEnd(sequence: UInt64, at end: UInt64) {
        let start = spanStart.load(ordering: .relaxed)
        awakeEnded.add(end > start ? end &- start : 0, ordering: .relaxed)
        awakeEndedThrough.store(sequence, ordering: .releasing)
        guard end &- start >= publishAfter else { return }
        let passBegan = passStart.load(ordering: .relaxed)
        let lastPass = end > passBegan ? end - passBegan : 0
        let longest = max(longestPass.load(ordering: .relaxed), lastPass)
        endedSpans.publish(
            EndedSpan(
                sequence: sequence, start: spanStart.load(ordering: .relaxed), end: end,
                passes: passes.load(ordering: .relaxed), longestPass: longest,
                thread: spanThread.load(ordering: .relaxed)))
    }

    // MARK: Pull probes (called on the watchdog thread by a ``PolledLoopProbe``, the only writer then)

    /// The probe saw the loop busy: a span began at `start` (at or before now, estimated by the
    /// probe), the thread's voluntary context switches then being `switches`. `thread` is the
    /// kernel id of the thread running it when that changes from span to span (0: the loop's own).
    func spanBegan(at start: UInt64, switches: UInt64, thread: Int32 = 0) {
        let current = SpanState(rawValue: state.load(ordering: .relaxed))
        guard !current.isOpen else { return }
        spanThread.store(thread, ordering: .relaxed)
        begin(after: current, at: start, switches: switches)
    }

    /// The probe saw the loop get back to its work (a token it queued ran) or wait at `end`: the
    /// span ended there, and is closed (a pull probe never suspends one).
    func spanEnded(at end: UInt64) {
        let current = SpanState(rawValue: state.load(ordering: .relaxed))
        guard current.isOpen else { return }
        let end = max(end, spanStart.load(ordering: .relaxed))
        publishEnd(sequence: current.sequence, at: end)
        state.store(current.with(.closed).rawValue, ordering: .sequentiallyConsistent)
    }

    /// Called before the observers are added when the loop is already running: the run in
    /// progress counts as the outermost one, so a nested run's `exit` does not suspend the span
    /// of the callout that started it. `awakeAt` (on the loop's thread, inside a callout) opens
    /// a span at that time.
    func assumeInsideRun(awakeAt now: UInt64?) {
        depth.store(1, ordering: .relaxed)
        if let now {
            begin(after: SpanState(rawValue: state.load(ordering: .relaxed)), at: now, switches: voluntarySwitches())
        }
    }

    /// Marks the current span (and, after `body`, the span then current) as expected long work.
    /// Called on the monitored thread. With a pull probe the thread may be working in a span the
    /// watchdog has not seen begin yet (the state still says closed): that next span is marked.
    func markExpectedLongWork() {
        let current = SpanState(rawValue: state.load(ordering: .acquiring))
        expectedLongWorkSequence.store(current.sequenceOfCurrentOrNext, ordering: .releasing)
    }

    // MARK: Watchdog

    /// The span currently open (or suspended) and its start, if any.
    func currentSpan() -> (sequence: UInt64, phase: Phase, start: UInt64, suspendedAt: UInt64) {
        let current = SpanState(rawValue: state.load(ordering: .sequentiallyConsistent))
        let start = spanStart.load(ordering: .relaxed)
        return (current.sequence, current.phase, start, suspensionTime())
    }

    /// Spans begun so far (the current span's sequence number): one relaxed load.
    var spansBegun: UInt64 { SpanState(rawValue: state.load(ordering: .relaxed)).sequence }

    /// The published end of span `sequence`, when it has ended and was long enough to publish.
    func endedSpan(_ sequence: UInt64) -> EndedSpan? {
        endedSpans.span(sequence)
    }

    /// The published spans after span `sequence` (each one longer than ``publishAfter``), oldest first.
    func endedSpans(after sequence: UInt64) -> [EndedSpan] {
        endedSpans.spans(after: sequence)
    }

    /// The loop's awake time up to `now`, in nanoseconds: the spans that ended, plus the one in
    /// progress up to now (up to its suspension while suspended). Read off the loop's thread; a
    /// read racing a span's end may count that span twice once (callers never let it go back).
    func awakeNanos(now: UInt64) -> UInt64 {
        var result: UInt64 = 0
        for _ in 0..<4 {
            let current = SpanState(rawValue: state.load(ordering: .sequentiallyConsistent))
            let through = awakeEndedThrough.load(ordering: .acquiring)
            let ended = awakeEnded.load(ordering: .relaxed)
            let start = spanStart.load(ordering: .relaxed)
            let suspended = suspensionTime()
            var inProgress: UInt64 = 0
            if through != current.sequence {
                switch current.phase {
                case .open: inProgress = now > start ? now - start : 0
                case .suspended: inProgress = suspended > start ? suspended - start : 0
                default: break
                }
            }
            result = ended &+ inProgress
            if SpanState(rawValue: state.load(ordering: .sequentiallyConsistent)) == current { break }
        }
        return result
    }

    /// Pass counts of the span in progress (approximate while it runs).
    func passesSoFar(now: UInt64) -> (passes: Int, longestPass: UInt64) {
        let passBegan = passStart.load(ordering: .relaxed)
        let current = now > passBegan ? now - passBegan : 0
        return (passes.load(ordering: .relaxed), max(longestPass.load(ordering: .relaxed), current))
    }
}
