import Dispatch

/// A task executor that runs its jobs on one thread of the monitor's own, for the tasks a
/// monitor runs when it starts (``PoolLayout``'s): they run there, never on the concurrency
/// pool. A host that never uses the pool then gets no pool worker from the monitor, and with it
/// none of libdispatch's workqueue monitor, a 1 s timer on its manager thread that runs for the
/// rest of the process once a first worker exists.
///
/// The thread runs jobs until ``finish()`` was called and none is left, then ends; it holds the
/// executor until then (a task keeps running on it after its creator let go).
final class OwnThreadTaskExecutor: TaskExecutor, Sendable {
    private struct Queue {
        var jobs: [UnownedJob] = []
        var finished = false
    }

    private let queue = Locked(Queue())
    /// Signalled once per job queued and once at ``finish()``.
    private let available = DispatchSemaphore(value: 0)

    /// Starts the executor's thread, named `name` (at most 15 bytes).
    init(name: String) {
        NativeThread.start(name: name, stackSize: 512 << 10) { [self] in runJobs() }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.withLock { $0.jobs.append(job) }
        available.signal()
    }

    /// Lets the thread end once it has run every job queued so far.
    func finish() {
        queue.withLock { $0.finished = true }
        available.signal()
    }

    private func runJobs() {
        while true {
            available.wait()
            let next = queue.withLock { queue -> (job: UnownedJob?, done: Bool) in
                if queue.jobs.isEmpty { return (nil, queue.finished) }
                return (queue.jobs.removeFirst(), false)
            }
            if let job = next.job {
                job.runSynchronously(on: asUnownedTaskExecutor())
            } else if next.done {
                return
            }
        }
    }
}
