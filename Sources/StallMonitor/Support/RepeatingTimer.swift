import CStallMonitor
import Foundation
import Synchronization

/// Hands work to a queue (the writer's) on schedules (fixed, or ramping up), driven by a small
/// thread of its own that sleeps on a semaphore, or runs short work on that thread itself. Not a
/// dispatch timer: on Linux the first dispatch timer starts libdispatch's timer thread, which then
/// lives as long as the process, and after `stop()` the monitor must leave no thread behind. One
/// timer runs several jobs, each on its own schedule: a monitor has one timer thread (session
/// heartbeat, alive marks and cache release), not one per job, so an idle monitor's memory holds
/// one thread stack fewer.
final class RepeatingTimer: Sendable {
    private let wake = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)
    private let cancelled = Locked(false)

    /// When a job runs.
    enum Schedule: Sendable {
        /// Every interval, the first time one interval after the start.
        case every(Duration)
        /// Often at first, then less and less: each run a tenth of the time since the start after
        /// the one before (at least 1 s after it), until runs are `interval` apart. Something that
        /// records how long it has been alive (the session heartbeat) is then never off by more
        /// than max(1 s, 10 %) of its life, while costing one run per `interval` in the long run.
        case rampingUp(to: Duration)

        /// The wait before the run after one at `elapsed` ns since the start (at least 1 ms: a
        /// zero interval must not spin).
        func period(afterRunAt elapsed: UInt64) -> UInt64 {
            switch self {
            case .every(let interval):
                return max(UInt64(clamping: interval.nanoseconds), 1_000_000)
            case .rampingUp(let interval):
                let longest = max(UInt64(clamping: interval.nanoseconds), 1_000_000)
                return min(longest, max(elapsed / 10, 1_000_000_000))
            }
        }
    }

    /// One job: when it runs, and where.
    struct Job: Sendable {
        /// When it runs.
        let schedule: Schedule
        /// It runs on the timer's thread (a few microseconds at most: it delays the other jobs)
        /// instead of being handed to the queue (which may be the writer's thread, asleep).
        let onTimerThread: Bool
        /// It runs only while this is open (nil: always).
        let gate: Gate?
        let run: @Sendable () -> Void

        /// A job handed to the queue, while `gate` is open (nil: always).
        static func queued(_ schedule: Schedule, gate: Gate? = nil, _ run: @escaping @Sendable () -> Void) -> Job {
            Job(schedule: schedule, onTimerThread: false, gate: gate, run: run)
        }

        /// A short job run on the timer's own thread.
        static func onTimerThread(_ schedule: Schedule, _ run: @escaping @Sendable () -> Void) -> Job {
            Job(schedule: schedule, onTimerThread: true, gate: nil, run: run)
        }
    }

    /// Whether a job runs: while it is closed the timer sleeps past the job (its thread does not
    /// wake for it); opening it starts the job's schedule again, one period from then. A job that
    /// has work only now and then (the blocking calls' reporter) opens its gate when work comes
    /// and closes it when it has none.
    final class Gate: Sendable {
        private enum State: UInt8 {
            case open, closed, skipped  // skipped: closed, and the timer sleeps past its job
        }
        private let state: Atomic<UInt8>
        private let wake = Locked<DispatchSemaphore?>(nil)

        /// A gate, closed or open.
        init(open: Bool) { state = Atomic(open ? State.open.rawValue : State.closed.rawValue) }

        /// Opens it; wakes the timer when it sleeps past the job.
        func open() {
            guard state.exchange(State.open.rawValue, ordering: .sequentiallyConsistent) == State.skipped.rawValue
            else { return }
            wake.withLock { $0 }?.signal()
        }

        /// Closes it (the job runs no more until it is opened).
        func close() {
            _ = state.compareExchange(
                expected: State.open.rawValue, desired: State.closed.rawValue, ordering: .sequentiallyConsistent)
        }

        /// The timer's view: whether the job may run; a closed gate is marked as slept past.
        fileprivate func admits() -> Bool {
            let (exchanged, current) = state.compareExchange(
                expected: State.closed.rawValue, desired: State.skipped.rawValue, ordering: .sequentiallyConsistent)
            return !exchanged && current == State.open.rawValue
        }

        fileprivate func attach(_ semaphore: DispatchSemaphore) { wake.withLock { $0 = semaphore } }
    }

    /// Runs each of `jobs` as its schedule says, queued ones through `enqueue`.
    init(enqueue: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void, jobs: [Job]) {
        precondition(!jobs.isEmpty, "at least one job")
        let schedules = jobs.map(\.schedule)
        let wake = self.wake
        for job in jobs { job.gate?.attach(wake) }
        let exited = self.exited
        let cancelled = self.cancelled
        NativeThread.start(name: "stall-heartbeat", stackSize: 64 * 1024) {
            let start = DispatchTime.now().uptimeNanoseconds
            func after(_ time: UInt64, _ period: UInt64) -> UInt64 {
                let sum = time.addingReportingOverflow(period)
                return sum.overflow ? UInt64.max : sum.partialValue
            }
            var due = schedules.map { after(start, $0.period(afterRunAt: 0)) }
            var admitted = jobs.map { _ in true }
            while true {
                var now = DispatchTime.now().uptimeNanoseconds
                for index in jobs.indices {
                    let admits = jobs[index].gate?.admits() ?? true
                    if admits && !admitted[index] { due[index] = after(now, schedules[index].period(afterRunAt: 0)) }
                    admitted[index] = admits
                }
                let next = jobs.indices.filter { admitted[$0] }.map { due[$0] }.min() ?? UInt64.max
                let wait = next > now ? next - now : 0
                let signalled = wake.wait(timeout: .now() + .nanoseconds(Int(clamping: wait))) == .success
                if cancelled.withLock({ $0 }) { break }
                if signalled { continue }  // a gate opened: look at the schedules again
                now = DispatchTime.now().uptimeNanoseconds
                for index in due.indices where admitted[index] && due[index] <= now {
                    if jobs[index].onTimerThread { jobs[index].run() } else { enqueue(jobs[index].run) }
                    // The next run one period after this one (one after now, when late).
                    let period = schedules[index].period(afterRunAt: due[index] &- start)
                    let following = after(due[index], period)
                    due[index] = following > now ? following : after(now, period)
                }
            }
            exited.signal()
        }
    }

    /// Stops the timer and waits for its thread to end (at once); a run already handed over
    /// finishes on its queue. Calling it again does nothing.
    func cancel() {
        let first = cancelled.withLock { cancelled in
            defer { cancelled = true }
            return !cancelled
        }
        guard first else { return }
        wake.signal()
        exited.wait()
    }
}
