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

    /// Learns and checks the layout; waits at most `timeout` for a task to run on the pool when
    /// the caller is not in one.
    static func learn(timeout: Duration = .seconds(2)) -> Result<PoolLayout, StallMonitorError> {
        #if os(Linux) && arch(x86_64) && compiler(>=6.0)
        guard let thread = learnThreadLayout() else {
            if let unreadable = SyscallDenialWatch.ownMemoryUnreadable {
                return .failure(.unsupportedLoop("the concurrency pool cannot be watched: \(unreadable)"))
            }
            return .failure(
                .unsupportedLoop(
                    "the concurrency pool cannot be watched: this C library's thread layout is not the one StallMonitor knows (glibc on x86_64)"
                ))
        }
        let found: Result<TaskFindings, StallMonitorError>
        if let here = findingsInCurrentTask() {
            found = here
        } else {
            found = findingsOnPool(timeout: timeout)
        }
        switch found {
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

    /// The thread layout, learned on a short-lived thread of our own (one whose stack glibc
    /// allocated, like every Dispatch worker's); nil when it does not read as expected.
    private static func learnThreadLayout() -> (distance: UInt, tidOffset: Int)? {
        let result = Locked<(distance: UInt, tidOffset: Int)?>(nil)
        let done = DispatchSemaphore(value: 0)
        NativeThread.start(name: "stall-layout", stackSize: 128 * 1024) {
            var distance: UInt = 0
            var tidOffset = 0
            if CStallMonitor_learn_thread_layout(&distance, &tidOffset) == 0 {
                result.withLock { $0 = (distance, tidOffset) }
            }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }
    }

    /// What is learned inside a task: the active-task offset, and why the task id cannot be used (nil: it can).
    private struct TaskFindings: Sendable {
        var activeTaskOffset: Int
        var idProblem: String?
    }

    /// What is learned in the task the caller runs in; nil when it runs in none.
    private static func findingsInCurrentTask() -> Result<TaskFindings, StallMonitorError>? {
        guard let task = currentTaskAddress() else { return nil }
        return findings(in: task)
    }

    /// What is learned in a task started for it on the pool.
    private static func findingsOnPool(timeout: Duration) -> Result<TaskFindings, StallMonitorError> {
        let result = Locked<Result<TaskFindings, StallMonitorError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            let found =
                currentTaskAddress().map(findings(in:))
                ?? .failure(.unsupportedLoop("a task on the concurrency pool found no current task"))
            result.withLock { $0 = found }
            done.signal()
        }
        guard done.wait(timeout: .now() + .nanoseconds(Int(timeout.nanoseconds))) == .success,
            let found = result.withLock({ $0 })
        else {
            return .failure(
                .loopNotRunning(
                    "the concurrency pool did not run a task within \(timeout) of start: it is stuck (every worker held), so it cannot be checked and watched"
                ))
        }
        return found
    }

    /// The active-task offset and the task-id check, on the calling thread inside the task at `task`.
    private static func findings(in task: UInt) -> Result<TaskFindings, StallMonitorError> {
        activeTaskOffset(holding: task).map {
            TaskFindings(activeTaskOffset: $0, idProblem: TaskIDCheck.problem(inRunningTask: task))
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
