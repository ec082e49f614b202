import Glibc

/// This process's `/proc/self/task`, kept open by a pool probe (on the watchdog thread): the
/// thread count from one `fstat` of the open directory (the kernel counts the threads at each),
/// the thread ids from one rewind and read of it. Opened again at every look it costs a path walk
/// through `/proc/self` each time, the largest part of what an idle pool's look costs. Where it
/// cannot be opened, each answer opens the directory as ``PoolWorkerScan`` does.
final class TaskDirectory {
    private let directory: OpaquePointer?

    /// Opens the directory (the calling process's: opened before a `fork`, it names the parent's).
    init() {
        directory = opendir("/proc/self/task")
    }

    deinit {
        if let directory { closedir(directory) }
    }

    /// How many threads the process has now (the directory's link count less two); nil when it
    /// cannot be read.
    func threadCount() -> Int? {
        guard let directory else { return PoolWorkerScan.threadCount() }
        var info = stat()
        guard fstat(dirfd(directory), &info) == 0 else { return nil }
        return PoolWorkerScan.threadCount(of: info)
    }

    /// The kernel ids of the process's threads now.
    func threadIDs() -> [Int32] {
        guard let directory else { return PoolWorkerScan.threadIDs() }
        rewinddir(directory)
        return PoolWorkerScan.threadIDs(reading: directory)
    }
}
