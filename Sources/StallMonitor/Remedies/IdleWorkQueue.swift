import CStallMonitor
import CoreFoundation
import Foundation

/// Runs deferred work on a run loop's thread at the moments the loop would otherwise sleep,
/// a time budget at a time, so heavy work never holds the loop for long.
///
/// ```swift
/// let idle = try IdleWorkQueue(loop: .main, .init(budget: .milliseconds(4), capacity: 500))
/// for row in rows { idle.submit(label: "thumbnail \(row)") { renderThumbnail(row) } }
/// ```
///
/// - **When work runs:** when the loop is about to wait (`beforeWaiting`, in the common modes),
///   never while the loop has anything else to do: sources, timers and blocks always come first.
///   Each pass starts work items until `budget` has passed (at least one per pass: an item longer
///   than the budget still runs whole, and the stall monitor sees it as a long span); if work
///   remains, the loop is woken at once for another pass, so it handles whatever arrived
///   meanwhile and comes back.
/// - **Order:** items run one at a time on the loop's thread, oldest first, in the order their
///   `submit` calls took the queue's lock (so in program order for one submitting thread). An
///   item submitted by a running item may run in the same pass.
/// - **Bounds:** at most `capacity` items wait; submitting to a full queue drops the oldest
///   waiting item (its ticket becomes `dropped`, `onDrop` is called with reason `capacity`).
/// - **Threads:** `submit`, `cancel`, `cancelAll`, `close` and `statistics` may be called from
///   any thread; work submitted while the loop sleeps wakes it.
/// - **Shutdown:** ``close()`` stops the queue and hands back every item that did not run, in
///   order, for the caller to run or drop; later submissions are dropped with reason `closed`. A
///   queue released without `close()` drops its waiting items with reason `released`. Either
///   way, no item disappears without its ticket and `onDrop` saying so.
/// - **With StallMonitor:** a monitor watching the same loop counts each pass's items in the
///   loop's awake span and ends the span when the pass leaves work for the next one (the loop
///   would have slept), so draining a long backlog is not one long stall, while a single item
///   longer than the threshold is reported with its stack.
///
/// Keep a reference to the queue for as long as it should run.
public final class IdleWorkQueue: @unchecked Sendable {
    /// How much work a pass may start, how much may wait, and who hears of dropped work.
    public struct Configuration: Sendable {
        /// After this much time in one pass no further item starts (the running one finishes).
        public var budget: Duration
        /// The most items that may wait; more drop the oldest.
        public var capacity: Int
        /// Called for every item dropped without running (not for those ``IdleWorkQueue/close()``
        /// hands back): on the thread whose call dropped it, after the queue's lock is released.
        public var onDrop: (@Sendable (UnrunIdleWork) -> Void)?

        /// A configuration; the defaults suit a UI-like loop (4 ms per pass, 1,024 waiting items).
        public init(
            budget: Duration = .milliseconds(4), capacity: Int = 1_024,
            onDrop: (@Sendable (UnrunIdleWork) -> Void)? = nil
        ) {
            self.budget = budget
            self.capacity = capacity
            self.onDrop = onDrop
        }
    }

    /// What the queue has done so far.
    public struct Statistics: Sendable, Equatable {
        /// Items submitted (including those dropped or refused later).
        public var submitted = 0
        /// Items that ran to their end.
        public var completed = 0
        /// Items dropped: for capacity, after `close()`, or at release.
        public var dropped = 0
        /// Items cancelled before they began.
        public var cancelled = 0
        /// Items handed back by `close()`.
        public var handedBack = 0
        /// Items waiting now.
        public var pending = 0
        /// Loop passes in which at least one item ran.
        public var passes = 0
        /// Items that alone took longer than the budget.
        public var itemsOverBudget = 0
        /// The longest single item.
        public var longestItem: Duration = .zero
        /// Time spent running items.
        public var busyTime: Duration = .zero

        /// Empty statistics.
        public init() {}
    }

    /// The configuration the queue runs with.
    public let configuration: Configuration
    private let drainer: IdleWorkDrainer
    private let runLoop: CFRunLoop
    private let observer: CFRunLoopObserver

    /// Creates a queue that runs work on the thread of `loop` (the main run loop by default;
    /// `.current` is the calling thread's, so create it on that thread, or use
    /// ``ResidentLoopThread/makeIdleWorkQueue(_:)``). Throws `invalidConfiguration` for a budget
    /// that is not positive, a capacity below 1, or `.mainActor` (no run loop).
    public convenience init(
        loop: StallMonitor.Loop = .main, _ configuration: Configuration = .init()
    ) throws(StallMonitorError) {
        if loop == .mainActor {
            throw .invalidConfiguration("an idle work queue runs on a run loop; `.mainActor` is none")
        }
        try self.init(runLoop: loop.cfRunLoop, configuration)
    }

    init(runLoop cfRunLoop: CFRunLoop, _ configuration: Configuration) throws(StallMonitorError) {
        guard configuration.budget > .zero else {
            throw .invalidConfiguration("idle work budget must be positive, not \(configuration.budget)")
        }
        guard configuration.capacity >= 1 else {
            throw .invalidConfiguration("idle work capacity must be at least 1, not \(configuration.capacity)")
        }
        self.configuration = configuration
        self.runLoop = cfRunLoop
        drainer = IdleWorkDrainer(runLoop: cfRunLoop, configuration: configuration)
        // Order 0: after StallMonitor's opening observer (Int.min) and before its suspending one
        // (Int.max), so the items run inside the monitored span.
        observer = RunLoopObserver.make(CFRunLoopActivity.beforeWaiting.rawValue, order: 0, info: drainer) {
            _, _, info in
            guard let info else { return }
            // A strong reference for the whole pass: an item may release the last reference to
            // the queue, whose deinit invalidates this observer (which then releases `info`).
            let drainer = Unmanaged<IdleWorkDrainer>.fromOpaque(info).takeUnretainedValue()
            drainer.drainPass()
        }
        CFRunLoopAddObserver(cfRunLoop, observer, kCFRunLoopCommonModes)
        // The loop may be asleep already: wake it so it comes round to `beforeWaiting` again.
        CFRunLoopWakeUp(cfRunLoop)
    }

    deinit {
        removeObserver()
        let remaining = drainer.backlog.withLock { backlog in
            let entries = backlog.removeAll(closing: true).filter { $0.ticket.move(from: .pending, to: .dropped) }
            backlog.statistics.dropped += entries.count
            return entries
        }
        for entry in remaining { drainer.reportDrop(entry, .released) }
    }

    /// Queues `work` to run on the loop's thread when the loop is next about to sleep. Returns its
    /// ticket (its state; a way to cancel it). After ``close()`` the work is dropped at once.
    @discardableResult
    public func submit(label: String? = nil, _ work: @escaping @Sendable () -> Void) -> IdleWorkTicket {
        drainer.submit(label: label, work)
    }

    /// Cancels every waiting item; returns how many were cancelled. Items running now finish.
    @discardableResult
    public func cancelAll() -> Int {
        drainer.backlog.withLock { backlog in
            let cancelled = backlog.removeAll(closing: false).filter { $0.ticket.move(from: .pending, to: .cancelled) }
            backlog.statistics.cancelled += cancelled.count
            return cancelled.count
        }
    }

    /// Stops the queue: no further item starts (one running now finishes), the observer leaves
    /// the loop, later submissions are dropped with reason `closed`, and every item that never
    /// ran is handed back, oldest first, with its `work` for the caller to run or let go.
    /// Calling it again returns nothing.
    public func close() -> [UnrunIdleWork] {
        removeObserver()
        return drainer.backlog.withLock { backlog in
            let entries = backlog.removeAll(closing: true).filter { $0.ticket.move(from: .pending, to: .handedBack) }
            backlog.statistics.handedBack += entries.count
            return entries.map { UnrunIdleWork(ticket: $0.ticket, reason: .handedBack, work: $0.work) }
        }
    }

    /// Counts so far.
    public var statistics: Statistics {
        drainer.backlog.withLock { backlog in
            var statistics = backlog.statistics
            statistics.pending = backlog.count
            return statistics
        }
    }

    private func removeObserver() {
        CFRunLoopRemoveObserver(runLoop, observer, kCFRunLoopCommonModes)
        CFRunLoopObserverInvalidate(observer)
    }
}

/// The part of an ``IdleWorkQueue`` its observer keeps alive: the backlog and the drain pass.
final class IdleWorkDrainer: @unchecked Sendable {
    let backlog = Locked(IdleWorkBacklog())
    private let runLoop: CFRunLoop
    private let budget: UInt64
    private let capacity: Int
    private let onDrop: (@Sendable (UnrunIdleWork) -> Void)?

    init(runLoop: CFRunLoop, configuration: IdleWorkQueue.Configuration) {
        self.runLoop = runLoop
        budget = UInt64(clamping: configuration.budget.nanoseconds)
        capacity = configuration.capacity
        onDrop = configuration.onDrop
    }

    func submit(label: String?, _ work: @escaping @Sendable () -> Void) -> IdleWorkTicket {
        let (ticket, dropped, closed, wasEmpty) = backlog.withLock { backlog in
            let sequence = backlog.nextSequence
            backlog.nextSequence += 1
            let ticket = IdleWorkTicket(
                label: label, sequence: sequence,
                status: backlog.closed ? .dropped : .pending
            ) { [weak self] ticket in
                self?.backlog.withLock { backlog in
                    backlog.remove(ticket)
                    backlog.statistics.cancelled += 1
                }
            }
            if backlog.closed {
                backlog.statistics.submitted += 1
                backlog.statistics.dropped += 1
                return (ticket, IdleWorkBacklog.Entry?.none, true, false)
            }
            let wasEmpty = backlog.isEmpty
            let dropped = backlog.append(.init(ticket: ticket, work: work), capacity: capacity)
            return (ticket, dropped, false, wasEmpty)
        }
        if closed { reportDrop(.init(ticket: ticket, work: work), .closed) }
        if let dropped { reportDrop(dropped, .capacity) }
        // A non-empty backlog already has a pass coming (each pass that leaves work wakes the loop).
        if wasEmpty { CFRunLoopWakeUp(runLoop) }
        return ticket
    }

    func reportDrop(_ entry: IdleWorkBacklog.Entry, _ reason: UnrunIdleWork.Reason) {
        onDrop?(UnrunIdleWork(ticket: entry.ticket, reason: reason, work: entry.work))
    }

    /// One pass, on the loop's thread as it is about to wait.
    func drainPass() {
        let passStart = CStallMonitor_monotonic_ns()
        var ran = 0
        var overBudget = 0
        var longest: UInt64 = 0
        var busy: UInt64 = 0
        while let entry = backlog.withLock({ $0.next() }) {
            // A ticket cancelled after it left the backlog is skipped (its cancel counted it).
            guard entry.ticket.move(from: .pending, to: .running) else { continue }
            let began = CStallMonitor_monotonic_ns()
            entry.work()
            let ended = CStallMonitor_monotonic_ns()
            _ = entry.ticket.move(from: .running, to: .completed)
            let took = ended &- began
            ran += 1
            busy &+= took
            longest = max(longest, took)
            if took > budget { overBudget += 1 }
            if ended &- passStart >= budget { break }
        }
        let more = backlog.withLock { backlog in
            if ran > 0 {
                backlog.statistics.completed += ran
                backlog.statistics.passes += 1
                backlog.statistics.itemsOverBudget += overBudget
                backlog.statistics.busyTime += .nanoseconds(Int64(clamping: busy))
                backlog.statistics.longestItem = max(
                    backlog.statistics.longestItem, .nanoseconds(Int64(clamping: longest)))
            }
            return !backlog.isEmpty && !backlog.closed
        }
        guard more else { return }
        // The loop would sleep now but for this work: say so to a StallMonitor on this thread
        // (its span ends here), and wake the loop so its wait returns at once for the next pass.
        CStallMonitor_note_loop_idle_yield()
        CFRunLoopWakeUp(runLoop)
    }
}
