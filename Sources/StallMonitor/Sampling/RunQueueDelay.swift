import Glibc

/// The calling thread's time spent runnable but waiting for a CPU, from
/// `/proc/thread-self/schedstat` (its second field, in nanoseconds). Opened on the thread it
/// measures (the watchdog) and re-read with `pread`. A watchdog that wakes late while this grew as
/// much was kept off the CPU (an overloaded machine); lateness it does not explain is time the
/// whole process was stopped (SIGSTOP, a debugger), during which no thread is runnable.
final class RunQueueDelay {
    private let fd: Int32
    private var buffer = [UInt8](repeating: 0, count: 128)

    /// Opens the file of the calling thread; readings are nil where the kernel lacks it.
    init() {
        fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC)
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// Nanoseconds this thread has waited on a run queue since it started; nil when unknown.
    func nanos() -> UInt64? {
        guard fd >= 0 else { return nil }
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return buffer.withUnsafeBufferPointer { SchedStat.parse(UnsafeBufferPointer(rebasing: $0[..<count]))?.waiting }
    }
}
