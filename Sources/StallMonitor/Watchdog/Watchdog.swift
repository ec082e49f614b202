import CStallMonitor
import Foundation
import Synchronization

/// The watchdog thread: event-driven, loop-agnostic. While every watched loop sleeps it parks
/// on a semaphore without a deadline (no periodic wake-ups); a span start wakes it; otherwise it
/// sleeps until the next thing due (a span reaching the sampling lead, the next sample, the next
/// look of a pull probe: most of those loops tell nobody when they wake, so it looks at them at
/// their interval; the concurrency pool's enqueue hook wakes it, so an idle pool is looked at
/// only every 2 s).
final class Watchdog: @unchecked Sendable {
    /// Loops not seen running `after` nanoseconds after the start are handed to `report`, once.
    struct SilenceCheck {
        var after: UInt64
        var report: ([MonitoredThread]) -> Void
    }

    private let watches: [ThreadWatch]
    private let pollers: [any PolledLoopProbe]
    private var silenceCheck: SilenceCheck?
    private let wakeup: WakeupSignal
    private let counters: MonitorCounters
    /// Its discard counts (debugger attached, process stopped, watchdog starved) are brought up
    /// to date after each step, so they show at once without a wake-up of their own.
    private let metrics: StallMetrics?
    private let running = Atomic<Bool>(true)
    private let exited = DispatchSemaphore(value: 0)
    /// Waking this much later than asked means the whole process was stopped (unless a monitored
    /// thread ran meanwhile, see ``ThreadWatch/noteProcessStopped(lateness:now:)``).
    private let stoppedAfter: UInt64

    init(
        watches: [ThreadWatch], wakeup: WakeupSignal, counters: MonitorCounters, metrics: StallMetrics? = nil,
        stoppedAfter: UInt64,
        silenceCheck: SilenceCheck? = nil
    ) {
        self.watches = watches
        self.pollers = watches.compactMap { $0.thread.probe as? any PolledLoopProbe }
        self.silenceCheck = silenceCheck
        self.wakeup = wakeup
        self.counters = counters
        self.metrics = metrics
        self.stoppedAfter = stoppedAfter
    }

    /// Starts the watchdog thread.
    func start() {
        NativeThread.start(name: "stall-watchdog", stackSize: 512 * 1024) { [self] in
            run()
            exited.signal()
        }
    }

    /// Asks the thread to finish and waits for it (it is never blocked for longer than one
    /// sample's deadline).
    func stop() {
        running.store(false, ordering: .sequentiallyConsistent)
        wakeup.signal()
        exited.wait()
    }

    /// How late a timed wait ended, when late enough (more than `stoppedAfter`) to mean the
    /// process may have been stopped; nil otherwise. Measured from the deadline, or from when the
    /// wait began if that was later: time the watchdog spent working before it could wait (a
    /// first unwinding that reads a big binary's tables took 0.9 s under ASan) is not lateness.
    static func lateness(deadline: UInt64, sleptAt: UInt64, woke: UInt64, stoppedAfter: UInt64) -> UInt64? {
        let expected = max(deadline, sleptAt)
        guard woke > expected &+ stoppedAfter else { return nil }
        return woke - expected
    }

    /// Arms every poller's wake-up before a sleep; false (and all disarmed) when one saw work
    /// arrive since its look.
    private func prepareToSleep() -> Bool {
        guard !pollers.allSatisfy({ $0.prepareToSleep(on: wakeup) }) else { return true }
        let now = CStallMonitor_monotonic_ns()
        for poller in pollers { poller.wokeUp(at: now) }
        return false
    }

    private func run() {
        let runQueue = RunQueueDelay()
        /// How long the watchdog waited for a CPU since `before` (nil when unknown).
        func waitedForCPU(since before: UInt64?) -> UInt64? {
            guard let before, let after = runQueue.nanos(), after >= before else { return nil }
            return after - before
        }
        let startedAt = CStallMonitor_monotonic_ns()
        while running.load(ordering: .sequentiallyConsistent) {
            let now = CStallMonitor_monotonic_ns()
            var deadline: UInt64?
            /// The silence check's time: not a deadline of any span, so the watchdog parks (a
            /// span start wakes it) with only this as its timeout.
            var checkDue: UInt64?
            if let check = silenceCheck {
                // Looked at until every loop has run, or once when the time is up.
                let silent = watches.map(\.thread).filter { !$0.hasRun }
                let due = startedAt &+ check.after
                if silent.isEmpty || now >= due {
                    if !silent.isEmpty { check.report(silent) }
                    silenceCheck = nil
                } else {
                    checkDue = due
                }
            }
            for poller in pollers {
                if let due = poller.poll(now: now) { deadline = min(deadline ?? .max, due) }
            }
            for watch in watches {
                if let due = watch.step(now: now) { deadline = min(deadline ?? .max, due) }
                watch.countBegunSpans()
            }
            metrics?.syncDropped(counters)
            guard running.load(ordering: .sequentiallyConsistent) else { break }
            // A loop that can wake the watchdog arms that now; one that got work since its look
            // has the watchdog look again at once.
            if !prepareToSleep() { continue }
            defer { for poller in pollers { poller.wokeUp(at: CStallMonitor_monotonic_ns()) } }
            if let deadline {
                let sleeping = CStallMonitor_monotonic_ns()
                for watch in watches { watch.noteWatchdogSleeps(now: sleeping) }
                let queuedBefore = runQueue.nanos()
                let signalled = wakeup.wait(until: deadline)
                let woke = CStallMonitor_monotonic_ns()
                if !signalled,
                    let lateness = Self.lateness(
                        deadline: deadline, sleptAt: sleeping, woke: woke, stoppedAfter: stoppedAfter)
                {
                    let waited = waitedForCPU(since: queuedBefore)
                    for watch in watches {
                        watch.noteProcessStopped(lateness: lateness, now: woke, waitedForCPU: waited)
                    }
                }
            } else {
                for watch in watches {
                    watch.thread.tracker.watchdogParked.store(true, ordering: .sequentiallyConsistent)
                }
                if watches.contains(where: { $0.hasOpenSpan }) {
                    for watch in watches {
                        watch.thread.tracker.watchdogParked.store(false, ordering: .sequentiallyConsistent)
                    }
                    continue
                }
                let parked = CStallMonitor_monotonic_ns()
                let queuedBefore = runQueue.nanos()
                wakeup.wait(until: checkDue)
                let woke = CStallMonitor_monotonic_ns()
                for watch in watches { watch.thread.tracker.watchdogParked.store(false, ordering: .relaxed) }
                // A span start wakes the watchdog at once; waking much later means it was kept
                // off the CPU, or the process was stopped right after the span began.
                if let waited = waitedForCPU(since: queuedBefore) {
                    for watch in watches {
                        watch.noteWokeFromPark(
                            parkedAt: parked, now: woke, stoppedAfter: stoppedAfter, waitedForCPU: waited)
                    }
                }
            }
            counters.watchdogWakeups.add(1, ordering: .relaxed)
        }
        for watch in watches {
            watch.finishOnStop()
            watch.countBegunSpans()
        }
        for poller in pollers { poller.finishPolling() }
        metrics?.syncDropped(counters)
    }
}
