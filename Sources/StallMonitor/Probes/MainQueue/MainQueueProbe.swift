import CStallMonitor
import Dispatch

/// The pull probe of the Dispatch main queue, which runs the MainActor's work in an `async main`
/// or `dispatchMain()` program on whichever Dispatch worker thread drains it: a thread that
/// changes from span to span.
///
/// - **Idle** while nobody drains the main queue: its drain owner (``MainQueueState``, one
///   memory load, no syscall) is 0.
/// - **Busy** while a worker drains it: a span begins on that worker (its thread id goes with the
///   span), dated from the middle of the interval since the last idle look, or from when the
///   queue last ran this probe's token if that is later.
/// - **Progress**: while busy, the probe queues a token on the main queue; the queue is serial,
///   so the token runs only after the job in progress, and its run time ends the span there. A
///   queue busy with short jobs runs every token within a few of them and never stalls; a stuck
///   job holds the token back. A different worker draining, or nobody, also ends the span.
///
/// The token also arms the worker it runs on, once per worker: its stack bounds and the sampling
/// signal unblocked (``MonitoredThread/armWorker(signal:report:)``), so a stall that later runs on
/// that worker is sampled while on the CPU; a stall on a worker that never ran a token is still
/// unwound while it sleeps in the kernel (from `/proc`, no signal), but not while it runs.
///
/// While the main queue is idle (nobody drains it, no token outstanding, no enqueue in the last
/// five intervals, at least 50 ms) the watchdog sleeps: the shim's `dispatch_async(_f)` pass-through
/// (`main_wakeup.c`) wakes it when work reaches the main queue, and it looks every 2 s for work
/// that came another way. Where that pass-through is not the one called (ThreadSanitizer's
/// interceptors, a host's own), no enqueue is ever seen and the queue is looked at every interval.
final class MainQueueProbe: PolledLoopProbe, @unchecked Sendable {
    /// The loop kind reports name.
    static let loopKind = LoopKind.mainActor.rawValue
    let kind = MainQueueProbe.loopKind
    var threadPerSpan: Bool { true }
    var runsTasks: Bool { true }
    /// Whether `tid` drains the main queue now (MainActor code calling ``StallMonitor/expectLongWork(_:)``).
    func runsLoopWork(on tid: Int32, armedTID: Int32) -> Bool { queue.owner() == tid }
    private let queue: MainQueueState
    /// The token queued on the main queue: when it last ran, and the workers it armed.
    private let token = WorkerArmingToken()

    // Watchdog-thread state (and `tracker`, set by attach before the watchdog starts).
    private var tracker: SpanTracker?
    /// When the queue last did not run a span: a look that found it idle (the next span began
    /// somewhere after it: the middle of the interval is taken), or a point of progress (a token
    /// ran, another worker took over: the next job began right after it).
    private var lastEnd: (at: UInt64, exact: Bool)?
    /// When the outstanding token was queued.
    private var tokenQueuedAt: UInt64?
    /// The thread of the open span; nil while none is open.
    private var spanThread: Int32?
    /// When the queue is looked at, and the watchdog's sleeps that a main-queue enqueue ends.
    private var looks: EnqueueWakeSchedule

    init(_ queue: MainQueueState, interval: UInt64) {
        self.queue = queue
        looks = EnqueueWakeSchedule(
            interval: max(interval, 1_000_000), takeFlag: { CStallMonitor_main_enqueued($0) != 0 },
            arm: { CStallMonitor_main_arm($0, $1 ? 1 : 0) })
    }

    func attach(to tracker: SpanTracker, arm: @escaping @Sendable () -> Void) {
        self.tracker = tracker
        token.arm(with: arm)
        DispatchQueue.main.async { [token] in token.ran() }
    }

    func detach() {
        token.detach()
    }

    func hasRun(tracker: SpanTracker, armed: Bool) -> Bool { armed }

    func finishPolling() {}

    /// The watchdog is about to sleep: while the queue is quiet, the next enqueue wakes it.
    func prepareToSleep(on wakeup: WakeupSignal) -> Bool {
        looks.prepareToSleep(offering: wakeup.slot) { [queue] in CStallMonitor_main_watch($0, queue.address) }
    }

    func wokeUp(at now: UInt64) {
        looks.wokeUp()
    }

    /// Takes the enqueue flag. After a sleep that an enqueue ended, the queue was idle until the
    /// wake-up was posted (the pass-through posts before it hands the job on), so a job found
    /// running is dated from the middle of the time since the post, not since the look before the
    /// sleep. (Not from the post itself, as on the pool: a worker must first be woken to drain
    /// the main queue, and dating from the post gave figure 12b a larger largest error, 15.5 ms
    /// against 10 ms.)
    /// After a sleep no post ended, a job found running reached the queue another way (a
    /// `DispatchQueue.main.asyncAfter` block, which libdispatch pushes without `dispatch_async`):
    /// dated from no earlier than ``EnqueueWakeSchedule/earliestUnknownStart(now:)``.
    private func noteEnqueues(now: UInt64) {
        let floor = looks.earliestUnknownStart(now: now)
        let woke = looks.noteEnqueues(now: now).wokeAt
        guard spanThread == nil, let last = lastEnd else { return }
        if let woke {
            if last.at < woke { lastEnd = (woke, false) }
        } else if last.at < floor {
            lastEnd = (floor, false)
        }
    }

    /// The next look (see ``EnqueueWakeSchedule``): the queue is quiet while idle with no span
    /// and no token out, once the pass-through has seen an enqueue at all.
    private func nextLook(now: UInt64, idle: Bool) -> UInt64 {
        looks.nextLook(
            now: now, idle: idle && spanThread == nil && tokenQueuedAt == nil && CStallMonitor_main_enqueues_seen() != 0
        )
    }

    func poll(now: UInt64) -> UInt64? {
        guard !token.isDetached, let tracker else { return nil }
        noteEnqueues(now: now)
        if let queued = tokenQueuedAt {
            let ran = token.lastRan
            if ran >= queued {
                tokenQueuedAt = nil
                if spanThread != nil {
                    tracker.spanEnded(at: ran)
                    spanThread = nil
                    lastEnd = (ran, true)
                }
            }
        }
        let owner = queue.owner()
        if owner == 0 {
            // Nobody drains the queue: the job of an open span finished since the last look.
            if spanThread != nil {
                tracker.spanEnded(at: now)
                spanThread = nil
            }
            lastEnd = (now, false)
            return nextLook(now: now, idle: true)
        }
        if let open = spanThread, open != owner {
            // Another worker drains the queue now: the open span's job finished.
            tracker.spanEnded(at: now)
            spanThread = nil
            lastEnd = (now, true)
        }
        if spanThread == nil {
            var start = now
            if let lastEnd, lastEnd.at < now {
                start = lastEnd.exact ? lastEnd.at : lastEnd.at + (now - lastEnd.at) / 2
            }
            tracker.spanBegan(at: start, switches: 0, thread: owner)
            spanThread = owner
        }
        if tokenQueuedAt == nil {
            tokenQueuedAt = CStallMonitor_monotonic_ns()
            DispatchQueue.main.async { [token] in token.ran() }
        }
        return nextLook(now: now, idle: false)
    }
}
