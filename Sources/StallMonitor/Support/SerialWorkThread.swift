import CStallMonitor
import Dispatch

/// A serial queue of work run by a thread of the monitor's own, not by libdispatch: in a child
/// that a multithreaded host forked, libdispatch runs no queued work (its worker threads were not
/// copied), so a writer on a dispatch queue would never write the child's reports. The thread
/// starts with the first job and parks on a semaphore while there is none (no wake-ups); after
/// ``close(waiting:)`` it ends once the queue is empty, and work queued later runs on a thread that ends
/// as soon as that work is done, so a stopped monitor leaves no thread behind.
final class SerialWorkThread: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var next = 0
        var threadRuns = false
        var closed = false
    }

    private let name: String
    private let state = Locked(State())
    private let wake = DispatchSemaphore(value: 0)
    /// Counts the jobs queued with `counted: true` that have not finished (futex-based: waiting on
    /// it needs no libdispatch thread).
    private let pending = DispatchGroup()
    /// Signalled by a thread that ends after ``close(waiting:)``.
    private let ended = DispatchSemaphore(value: 0)

    /// A queue whose thread is named `name` (at most 15 bytes are kept).
    init(name: String) {
        self.name = name
    }

    /// Queues `work`; ``wait(timeout:)`` waits for it when `counted`.
    func async(counted: Bool = true, _ work: @escaping @Sendable () -> Void) {
        let job: @Sendable () -> Void
        if counted {
            let pending = self.pending
            pending.enter()
            job = {
                work()
                pending.leave()
            }
        } else {
            job = work
        }
        let startThread = state.withLock { state -> Bool in
            state.jobs.append(job)
            guard !state.threadRuns else { return false }
            state.threadRuns = true
            return true
        }
        if startThread {
            start()
        } else {
            wake.signal()
        }
    }

    /// Waits until every counted job queued so far has run, at most `timeout` (nanoseconds).
    /// Returns false on timeout.
    func wait(timeout nanoseconds: UInt64) -> Bool {
        pending.wait(timeout: .now() + .nanoseconds(Int(clamping: nanoseconds))) == .success
    }

    /// Lets the thread end once the queue is empty and, when `waiting`, waits for it to end (the
    /// queued work runs first). Calling it again does nothing more.
    func close(waiting: Bool) {
        let running = state.withLock { state -> Bool in
            let wasOpen = !state.closed
            state.closed = true
            return wasOpen && state.threadRuns
        }
        guard running else { return }
        wake.signal()
        if waiting { ended.wait() }
    }

    private func start() {
        let name = self.name
        NativeThread.start(name: name, stackSize: 8 << 20) { [self] in run() }
    }

    /// What the thread does next.
    private enum Step {
        case run(@Sendable () -> Void)
        case park
        case end
    }

    /// The thread's loop: runs jobs in order; parks while there is none; ends when closed and empty.
    private func run() {
        while true {
            let step = state.withLock { state -> Step in
                if state.next < state.jobs.count {
                    let job = state.jobs[state.next]
                    state.next += 1
                    if state.next == state.jobs.count {
                        state.jobs.removeAll(keepingCapacity: true)
                        state.next = 0
                    }
                    return .run(job)
                }
                guard state.closed else { return .park }
                state.threadRuns = false
                return .end
            }
            switch step {
            case .run(let job):
                job()
            case .park:
                wake.wait()
            case .end:
                ended.signal()
                return
            }
        }
    }
}
