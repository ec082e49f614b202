import CStallMonitor

/// What the pool probe reads of a worker at each look to tell its jobs apart: the task it runs,
/// that task's id, and the task's entry in the enqueue hook's table of recent enqueues.
///
/// - The address alone merges a task freed and another allocated at the same address; the id
///   (the runtime's 32-bit `Job` id, fixed for a task's life and different for the next task)
///   tells them apart.
/// - The id alone merges two jobs of one task that suspended and was resumed between two looks;
///   the enqueue entry tells them apart when the task was resumed through the global executor
///   (continuations, `Task.sleep`, `Task.yield`, awaited tasks and groups): a task is enqueued
///   only while it does not run.
/// - The task header's `ResumeTask` and `ResumeContext` are not used: the runtime writes them in
///   the middle of a job (`swift_continuation_init`, and a wait on a task or group that has
///   already finished, neither of which suspends), which would split one job, and a loop around
///   one `await` writes the same two values at every suspension, which tells nothing.
struct PoolJobKey: Equatable {
    /// The task's address (0: the worker runs none).
    var task: UInt = 0
    /// The task's runtime id, low 32 bits (0: not read).
    var taskID: UInt32 = 0
    /// The task's entry in the table of recent enqueues when it was read.
    var enqueueMark: UInt = 0
    /// When that entry was written, when it names this task (CLOCK_MONOTONIC_COARSE ns; 0: not known).
    var enqueuedAt: UInt64 = 0

    /// Reads the key of the job the worker at thread pointer `pointer` runs; nil when its memory
    /// cannot be read (the thread is gone).
    static func read(threadPointer pointer: UInt, layout: PoolLayout) -> PoolJobKey? {
        var key = PoolJobKey()
        guard
            CStallMonitor_read_memory(
                UInt(bitPattern: Int(bitPattern: pointer) &+ layout.activeTaskOffset), &key.task, 8) == 0
        else {
            return nil
        }
        guard key.task != 0 else { return key }
        if let offset = layout.taskIDOffset, CStallMonitor_read_memory(key.task &+ UInt(offset), &key.taskID, 4) != 0 {
            key.taskID = 0  // freed and unmapped since: told apart by the next look
        }
        var enqueuedAt: UInt64 = 0
        key.enqueueMark = CStallMonitor_pool_job_mark(key.task, &enqueuedAt)
        if key.enqueueMark & ~15 == key.task { key.enqueuedAt = enqueuedAt }
        return key
    }

    /// Whether this key, read at a look, shows a job other than the one `previous` (read at the
    /// look before) showed: another task or none, another task at the same address, or the same
    /// task enqueued again since.
    func startsNewJob(after previous: PoolJobKey) -> Bool {
        if task != previous.task { return true }
        guard task != 0 else { return false }
        if taskID != 0, previous.taskID != 0, taskID != previous.taskID { return true }
        return enqueueMark & ~15 == task && enqueueMark != previous.enqueueMark
    }

    /// When the job this key showed had surely ended, read at a later look: the task was enqueued
    /// again since (resumed, or another task made at its address), which it is only while it does
    /// not run (the coarse clock's lag covered by half a `tick`); nil when its entry shows no such enqueue.
    func endedBy(tick: UInt64) -> UInt64? {
        guard task != 0 else { return nil }
        var enqueuedAt: UInt64 = 0
        let mark = CStallMonitor_pool_job_mark(task, &enqueuedAt)
        guard mark & ~15 == task, mark != enqueueMark, enqueuedAt != 0 else { return nil }
        return enqueuedAt &+ tick / 2
    }

    /// When a job this key shows as new began, seen at a look at `now` after one at `lastLook`
    /// that showed another: from its enqueue when that came after the last look (a free worker
    /// takes a job within moments; the coarse clock lags by less than a `tick`, so half a tick is
    /// added), else nil (the caller takes the middle of the interval). Always within the interval
    /// (an enqueue read after `now` was taken, while the look went on, gives `now`).
    func startEstimate(lastLook: UInt64, now: UInt64, tick: UInt64) -> UInt64? {
        guard task != 0, enqueuedAt != 0, enqueuedAt &+ tick >= lastLook else { return nil }
        return min(now, max(lastLook, enqueuedAt &+ tick / 2))
    }
}
