import Synchronization

/// One piece of work submitted to an ``IdleWorkQueue``: its state, and a way to cancel it.
/// Safe to use from any thread.
public final class IdleWorkTicket: Sendable, CustomStringConvertible {
    /// Where the work is in its life. Every ticket ends in exactly one of the last five states.
    public enum Status: UInt8, Sendable, CustomStringConvertible {
        /// Waiting for the loop to be about to sleep.
        case pending
        /// Running on the loop's thread now.
        case running
        /// Ran to its end.
        case completed
        /// Cancelled before it began (``IdleWorkTicket/cancel()``, ``IdleWorkQueue/cancelAll()``).
        case cancelled
        /// Dropped without running: the oldest pending work when the queue was full, work
        /// submitted after ``IdleWorkQueue/close()``, or work pending when the queue was released
        /// without `close()`. The queue's `onDrop` was called for it.
        case dropped
        /// Handed back, not run, by ``IdleWorkQueue/close()``.
        case handedBack

        /// The state's name.
        public var description: String {
            switch self {
            case .pending: "pending"
            case .running: "running"
            case .completed: "completed"
            case .cancelled: "cancelled"
            case .dropped: "dropped"
            case .handedBack: "handedBack"
            }
        }
    }

    /// The label given at submission, for drop callbacks and diagnostics.
    public let label: String?
    /// Submission order within its queue, from 1.
    public let sequence: UInt64
    private let state = Atomic<UInt8>(Status.pending.rawValue)
    private let cancelHandler: @Sendable (IdleWorkTicket) -> Void

    init(
        label: String?, sequence: UInt64, status: Status = .pending,
        onCancel cancelHandler: @escaping @Sendable (IdleWorkTicket) -> Void
    ) {
        self.label = label
        self.sequence = sequence
        self.cancelHandler = cancelHandler
        state.store(status.rawValue, ordering: .relaxed)
    }

    /// The work's state now.
    public var status: Status {
        Status(rawValue: state.load(ordering: .acquiring)) ?? .pending
    }

    /// Cancels the work if it has not begun: returns `true` when it will never run, `false` when
    /// it is running, has run, or had already left the queue another way.
    @discardableResult
    public func cancel() -> Bool {
        guard move(from: .pending, to: .cancelled) else { return false }
        cancelHandler(self)
        return true
    }

    /// Moves from `old` to `new` if the ticket is in `old`; returns whether it moved.
    func move(from old: Status, to new: Status) -> Bool {
        state.compareExchange(expected: old.rawValue, desired: new.rawValue, ordering: .acquiringAndReleasing).exchanged
    }

    /// Sequence, label and state, e.g. `#12 "row 40" pending`.
    public var description: String {
        "#\(sequence)\(label.map { " \"\($0)\"" } ?? "") \(status)"
    }
}

/// Work an ``IdleWorkQueue`` did not run: reported to `onDrop`, or handed back by
/// ``IdleWorkQueue/close()`` so the caller can run it elsewhere or let it go.
public struct UnrunIdleWork: Sendable {
    /// Why work was dropped.
    public enum Reason: String, Sendable {
        /// The queue was full; the oldest pending work made room for new work.
        case capacity
        /// Submitted after the queue was closed.
        case closed
        /// Pending when the queue was released without ``IdleWorkQueue/close()``.
        case released
        /// Pending when ``IdleWorkQueue/close()`` was called: handed back to its caller.
        case handedBack
    }

    /// The work's ticket (its label, sequence and final state).
    public let ticket: IdleWorkTicket
    /// Why it did not run.
    public let reason: Reason
    /// The work itself: call it to run it now, on the calling thread.
    public let work: @Sendable () -> Void
}
