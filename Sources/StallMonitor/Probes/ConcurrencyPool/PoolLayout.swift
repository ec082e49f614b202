import CStallMonitor
import Dispatch
import Synchronization

/// Where the monitor reads which task a concurrency-pool worker runs, learned and checked when a
/// monitor starts.
///
/// - The Swift runtime keeps the task a thread runs in a thread-local variable of
///   libswift_Concurrency (`ActiveTask`): the task's address while one of its jobs runs, 0
///   between jobs. Its module's TLS is static, so the variable lies at the same offset from every
///   thread's thread pointer; the offset is found by looking, inside a running task, for the
///   one word of that module's TLS block that holds the task's own address.
/// - glibc places a thread it created at a fixed distance below the end of its stack mapping, the
///   thread control block pointing to itself and holding the kernel thread id at a fixed offset:
///   learned on a thread of the monitor's own, and checked again on every worker found.
/// - A task begins with the runtime's `Job` header (Swift 6 `include/swift/ABI/Task.h`: heap
///   object 16 bytes, two scheduler words, 32-bit flags at 32, the 32-bit job id at 36, voucher,
///   reserved, `ResumeTask` at 56): the id word, the low half of the task's 64-bit id, tells a
///   task from the next one made at its address. It is checked in two tasks against the id the
///   runtime gives (`UnownedJob`'s description), with the known task's `ResumeTask` in an
///   executable mapping; where that fails the pool is watched by task address alone, said in
///   ``taskIDNote``.
///
/// Known for Swift 6.x on x86_64 Linux with glibc; anywhere else ``learn(timeout:)`` says why not
/// and the pool is not watched (never watched with a guess).
struct PoolLayout: Sendable {
    /// Offset of the runtime's active-task variable from a thread's thread pointer.
    var activeTaskOffset: Int
    /// Distance from the end of a thread's stack mapping down to its thread pointer.
    var stackEndDistance: UInt
    /// Offset of the kernel thread id in a thread control block.
    var tidOffset: Int
    /// Offset of the 32-bit job id in a task (nil: not checked, the task address alone is used).
    var taskIDOffset: Int?
    /// Why the task id is not used (nil when it is).
    var taskIDNote: String?

    /// Where `Job` keeps its id and `ResumeTask` (Swift 6.x, 64-bit).
    static let jobIDOffset = 36
    static let resumeTaskOffset = 56

    /// The runtime module whose TLS holds the active task.
    static let concurrencyModule = "libswift_Concurrency.so"

    /// The layout learned in this process, once it was: the runtime's and the C library's layout
    /// do not change while a process runs, so every later monitor, the blocking-call recorder and
    /// the benchmarks take it from here (a failure is not kept: a task that did not run in time
    /// may run the next time).
    private static let learned = Locked<PoolLayout?>(nil)

    /// Learns and checks the layout, in a task on a thread of the monitor's own
    /// (``OwnThreadTaskExecutor``: the pool itself runs nothing for it); waits at most `timeout`
    /// for that task. Learned once per process.
    static func learn(timeout: Duration = .seconds(10)) -> Result<PoolLayout, StallMonitorError> {
        if let known = learned.withLock({ $0 }) { return .success(known) }
        let result = learnAnew(timeout: timeout)
        if case .success(let layout) = result { learned.withLock { $0 = layout } }
        return result
    }

    private static func learnAnew(timeout: Duration) -> Result<PoolLayout, StallMonitorError> {
        #if os(Linux) && arch(x86_64) && compiler(>=6.0)
        guard let learned = learnOnOwnThread(timeout: timeout) else {
            return .failure(
                .unsupportedLoop(
                    "the concurrency pool cannot be watched: the monitor's own thread did not run its task within \(timeout) of start"
                ))
        }
        guard let thread = learned.thread else {
            if let unreadable = SyscallDenialWatch.ownMemoryUnreadable {
                return .failure(.unsupportedLoop("the concurrency pool cannot be watched: \(unreadable)"))
            }
            return .failure(
                .unsupportedLoop(
                    "the concurrency pool cannot be watched: this C library's thread layout is not the one StallMonitor knows (glibc on x86_64)"
                ))
        }
        switch learned.task {
        case .success(let findings):
            let note = findings.idProblem.map {
                "pool jobs are told apart by task address and enqueues only, not by task id: \($0)"
            }
            return .success(
                PoolLayout(
                    activeTaskOffset: findings.activeTaskOffset, stackEndDistance: thread.distance,
                    tidOffset: thread.tidOffset,
                    taskIDOffset: note == nil ? jobIDOffset : nil, taskIDNote: note))
        case .failure(let error):
            return .failure(error)
        }
        #else
        return .failure(
            .unsupportedLoop(
                "watching the concurrency pool reads the Swift runtime's per-thread state, whose layout StallMonitor knows for "
                    + "x86_64 Linux with glibc only"))
        #endif
    }

    /// What is learned on the monitor's thread: the thread layout (nil when it does not read as
    /// expected), and inside a task the active-task offset and why the task id cannot be used.
    private struct Learned: Sendable {
        var thread: (distance: UInt, tidOffset: Int)?
        var task: Result<TaskFindings, StallMonitorError>
    }

    /// What is learned inside a task: the active-task offset, and why the task id cannot be used (nil: it can).
    private struct TaskFindings: Sendable {
        var activeTaskOffset: Int
        var idProblem: String?
    }

    /// Learns, in a task on a short-lived thread of the monitor's own (one whose stack glibc
    /// allocated, like every Dispatch worker's), the thread layout and what a running task shows;
    /// nil when the task did not run within `timeout`.
    private static func learnOnOwnThread(timeout: Duration) -> Learned? {
        let executor = OwnThreadTaskExecutor(name: "stall-layout")
        defer { executor.finish() }
        let result = Locked<Learned?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached(executorPreference: executor) {
            var distance: UInt = 0
            var tidOffset = 0
            let thread = CStallMonitor_learn_thread_layout(&distance, &tidOffset) == 0 ? (distance, tidOffset) : nil
            let task =
                currentTaskAddress().map { findings(in: $0, executor: executor) }
                ?? .failure(.unsupportedLoop("a task on the monitor's own executor found no current task"))
            result.withLock { $0 = Learned(thread: thread, task: task) }
            done.signal()
        }
        guard done.wait(timeout: .now() + .nanoseconds(Int(timeout.nanoseconds))) == .success else { return nil }
        return result.withLock { $0 }
    }

    /// The active-task offset and the task-id check, on the calling thread inside the task at
    /// `task` (the check's second task runs on `executor`).
    private static func findings(
        in task: UInt, executor: OwnThreadTaskExecutor
    ) -> Result<TaskFindings, StallMonitorError> {
        activeTaskOffset(holding: task).map {
            TaskFindings(
                activeTaskOffset: $0, idProblem: TaskIDCheck.problem(inRunningTask: task, otherTasksOn: executor))
        }
    }

    /// The address of the task the calling thread runs, if any.
    private static func currentTaskAddress() -> UInt? {
        withUnsafeCurrentTask { task in task.map { unsafeBitCast($0, to: UInt.self) } }
    }

    /// Finds, on the calling thread inside a task at `task`, the one word of the runtime's TLS
    /// block that holds the task's address.
    private static func activeTaskOffset(holding task: UInt) -> Result<Int, StallMonitorError> {
        var block = 0
        guard CStallMonitor_tls_block_offset(concurrencyModule, &block) == 0 else {
            return .failure(
                .unsupportedLoop(
                    "the Swift concurrency runtime (\(concurrencyModule)) has no static TLS block here: the pool cannot be watched"
                ))
        }
        let pointer = CStallMonitor_thread_pointer()
        var matches: [Int] = []
        // The runtime's block is 32 bytes in Swift 6.x; look a little further in case it grows.
        for word in stride(from: 0, to: 128, by: 8) {
            var value: UInt = 0
            guard CStallMonitor_read_memory(UInt(bitPattern: Int(bitPattern: pointer) &+ block &+ word), &value, 8) == 0
            else { break }
            if value == task { matches.append(block + word) }
        }
        guard matches.count == 1, let offset = matches.first else {
            return .failure(
                .unsupportedLoop(
                    "the Swift concurrency runtime's per-thread state is not laid out as StallMonitor expects "
                        + "(\(matches.count) words hold the current task): the pool cannot be watched with this runtime"
                ))
        }
        return .success(offset)
    }
}
