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

    /// The runtime module whose TLS holds the active task.
    static let concurrencyModule = "libswift_Concurrency.so"

    /// Learns and checks the layout; waits at most `timeout` for a task to run on the pool when
    /// the caller is not in one.
    static func learn(timeout: Duration = .seconds(2)) -> Result<PoolLayout, StallMonitorError> {
        #if os(Linux) && arch(x86_64) && compiler(>=6.0)
        guard let thread = learnThreadLayout() else {
            return .failure(.unsupportedLoop(
                "the concurrency pool cannot be watched: this C library's thread layout is not the one StallMonitor knows (glibc on x86_64)"))
        }
        let found: Result<Int, StallMonitorError>
        if let here = activeTaskOffsetInCurrentTask() {
            found = here
        } else {
            found = activeTaskOffsetOnPool(timeout: timeout)
        }
        switch found {
        case .success(let offset):
            return .success(PoolLayout(activeTaskOffset: offset, stackEndDistance: thread.distance, tidOffset: thread.tidOffset))
        case .failure(let error):
            return .failure(error)
        }
        #else
        return .failure(.unsupportedLoop(
            "watching the concurrency pool reads the Swift runtime's per-thread state, whose layout StallMonitor knows for "
                + "x86_64 Linux with glibc only"))
        #endif
    }

    /// The thread layout, learned on a short-lived thread of our own (one whose stack glibc
    /// allocated, like every Dispatch worker's); nil when it does not read as expected.
    private static func learnThreadLayout() -> (distance: UInt, tidOffset: Int)? {
        let result = Locked<(distance: UInt, tidOffset: Int)?>(nil)
        let done = DispatchSemaphore(value: 0)
        NativeThread.start(name: "StallMonitor.layout", stackSize: 128 * 1024) {
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

    /// The active-task offset read in the task the caller runs in; nil when it runs in none.
    private static func activeTaskOffsetInCurrentTask() -> Result<Int, StallMonitorError>? {
        guard let task = currentTaskAddress() else { return nil }
        return activeTaskOffset(holding: task)
    }

    /// The active-task offset read in a task started for it on the pool.
    private static func activeTaskOffsetOnPool(timeout: Duration) -> Result<Int, StallMonitorError> {
        let result = Locked<Result<Int, StallMonitorError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            let found = currentTaskAddress().map(activeTaskOffset(holding:))
                ?? .failure(.unsupportedLoop("a task on the concurrency pool found no current task"))
            result.withLock { $0 = found }
            done.signal()
        }
        guard done.wait(timeout: .now() + .nanoseconds(Int(timeout.nanoseconds))) == .success,
              let found = result.withLock({ $0 })
        else {
            return .failure(.loopNotRunning(
                "the concurrency pool did not run a task within \(timeout) of start: it is stuck (every worker held), so it cannot be checked and watched"))
        }
        return found
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
            return .failure(.unsupportedLoop("the Swift concurrency runtime (\(concurrencyModule)) has no static TLS block here: the pool cannot be watched"))
        }
        let pointer = CStallMonitor_thread_pointer()
        var matches: [Int] = []
        // The runtime's block is 32 bytes in Swift 6.x; look a little further in case it grows.
        for word in stride(from: 0, to: 128, by: 8) {
            var value: UInt = 0
            guard CStallMonitor_read_memory(UInt(bitPattern: Int(bitPattern: pointer) &+ block &+ word), &value, 8) == 0 else { break }
            if value == task { matches.append(block + word) }
        }
        guard matches.count == 1, let offset = matches.first else {
            return .failure(.unsupportedLoop(
                "the Swift concurrency runtime's per-thread state is not laid out as StallMonitor expects "
                    + "(\(matches.count) words hold the current task): the pool cannot be watched with this runtime"))
        }
        return .success(offset)
    }
}
