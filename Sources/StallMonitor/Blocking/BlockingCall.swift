import CStallMonitor
import StallReportModel

/// A call that put a thread that must not block to sleep in the kernel for at least the
/// detector's threshold: a Swift task's thread (a concurrency-pool worker running a job, the main
/// thread running MainActor work) or a thread marked as one that must not block.
public struct BlockingCall: Sendable, CustomStringConvertible {
    /// One frame of the caller's stack, the caller first.
    public struct Frame: Sendable {
        /// The return address.
        public var address: UInt
        /// The function's demangled name, when it could be found.
        public var function: String?
        /// The source file and line of the call, when the image has line tables.
        public var file: String?
        /// The line in `file`.
        public var line: Int?
    }

    /// The C library function called: `usleep`, `read`, `pthread_mutex_lock`, `sem_wait`, …;
    /// `futex` for a futex wait made with `syscall()` (`DispatchGroup.wait`,
    /// `DispatchQueue.sync`, `Synchronization.Mutex`).
    public var call: String
    /// How long the call blocked, measured on the calling thread with CLOCK_MONOTONIC.
    public var duration: Duration
    /// CLOCK_MONOTONIC when the call was made, in nanoseconds.
    public var startNanoseconds: UInt64
    /// The kernel thread id of the caller.
    public var threadID: Int32
    /// Whether the thread ran a Swift task (else a probe or the host marked it).
    public var inTask: Bool
    /// Whether the thread was draining the main queue, that is running MainActor work (a Dispatch
    /// worker in an `async main` program, the main thread under a RunLoop); nil when libdispatch's
    /// layout is not known to this build.
    public var drainsMainQueue: Bool?
    /// The caller's stack, found by following frame pointers from the call site up. In a Swift
    /// task it ends where the job began.
    public var frames: [Frame]
    /// In a Swift task, the async functions awaiting the one that made the call, innermost first,
    /// ending at the task's root (each named by the function it resumes in, its entry address):
    /// the logical stack is ``frames`` followed by these. Empty outside a task, or when the
    /// runtime's task layout is not known to this build.
    public var asyncCallers: [Frame] = []
    /// True when ``asyncCallers`` were read from the context the job started in (a build whose
    /// async functions keep no frame): the first is the function the job started by calling, and
    /// async functions entered since without suspending may be missing before it.
    public var asyncCallersFromJobStart = false
    /// False when ``asyncCallers`` stop short of the task's root (the chain was deeper than the
    /// callers a record reads, or spread over more of the task's memory): the outer callers are missing.
    public var asyncCallersReachRoot = true

    /// The innermost frame with a name that is not the C library's or the Swift runtime's: where
    /// the app's code made the call (nil when no frame has a name).
    public var callSite: Frame? {
        frames.first { frame in
            guard let function = frame.function else { return false }
            return !BlockingCallsReport.isRuntimeName(function)
        } ?? frames.first { $0.function != nil }
    }

    /// `usleep blocked 20.3 ms in a Swift task on thread 4242`, then the stack, a frame a line.
    public var description: String {
        let milliseconds = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        var text =
            "\(call) blocked \(formatMilliseconds(milliseconds)) ms \(inTask ? "in a Swift task" : "on a marked thread")"
            + " on thread \(threadID)"
        func line(_ frame: Frame) -> String {
            var line = frame.function ?? "0x" + String(frame.address, radix: 16)
            if let file = frame.file { line += " (\(file)\(frame.line.map { ":\($0)" } ?? ""))" }
            return line
        }
        for frame in frames { text += "\n    " + line(frame) }
        if !asyncCallers.isEmpty {
            text += "\n  awaited by" + (asyncCallersFromJobStart ? " (from the job's start)" : "") + ":"
            for frame in asyncCallers { text += "\n    " + line(frame) }
            if !asyncCallersReachRoot { text += "\n    … (outer callers not read)" }
        }
        return text
    }
}

/// `value` with one decimal.
private func formatMilliseconds(_ value: Double) -> String {
    let tenths = (value * 10).rounded()
    return "\(Int(tenths) / 10).\(Int(tenths) % 10)"
}
