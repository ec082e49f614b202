import CStallMonitor
import Glibc
import StallReportModel

/// Finds the concurrency pool's worker threads: the process's threads that libdispatch named
/// after a global root queue that does not overcommit (`com.apple.root.default-qos`, shown by
/// the kernel as its last 15 bytes, `oot.default-qos`; newer libdispatch names every worker
/// `DispatchWorker`). The main queue of an `async main` program and serial queues drain on the
/// overcommitting queues' workers (`…-qos.overcommit`): they are not the pool.
enum PoolWorkerScan {
    /// Whether a thread named `name` is a pool worker.
    static func isPoolWorker(named name: String) -> Bool {
        name.hasSuffix("-qos") || name == "DispatchWorker"
    }

    /// Whether the process has a pool worker now.
    static func anyPoolWorker() -> Bool {
        threadIDs().contains { isPoolWorker(named: ThreadProcFiles.threadName(tid: $0)) }
    }

    /// How many threads the process has now: `/proc/self/task`'s link count less two (one
    /// `stat`, no directory read); nil when it cannot be read.
    static func threadCount() -> Int? {
        var info = stat()
        guard stat("/proc/self/task", &info) == 0 else { return nil }
        return threadCount(of: info)
    }

    /// The thread count a `stat` of `/proc/self/task` says; nil when it says none.
    static func threadCount(of info: stat) -> Int? {
        info.st_nlink >= 2 ? Int(info.st_nlink) - 2 : nil
    }

    /// The kernel ids of the process's threads now.
    static func threadIDs() -> [Int32] {
        guard let directory = opendir("/proc/self/task") else { return [] }
        defer { closedir(directory) }
        return threadIDs(reading: directory)
    }

    /// The thread ids in the open `/proc/self/task` `directory`, read from where it stands.
    static func threadIDs(reading directory: OpaquePointer) -> [Int32] {
        var ids: [Int32] = []
        while let entry = readdir(directory) {
            let name: String = CString.direntName(entry)
            if let tid = Int32(name) { ids.append(tid) }
        }
        return ids
    }

    /// The thread pointers of threads `wanted`, found in the stack mappings (one read of
    /// /proc/self/maps).
    static func threadPointers(of wanted: Set<Int32>, layout: PoolLayout) -> [Int32: UInt] {
        guard !wanted.isEmpty else { return [:] }
        let capacity = 4096
        var tids = [pid_t](repeating: 0, count: capacity)
        var pointers = [UInt](repeating: 0, count: capacity)
        let count = CStallMonitor_find_thread_pointers(
            layout.stackEndDistance, layout.tidOffset, &tids, &pointers, Int32(capacity))
        guard count > 0 else { return [:] }
        var found: [Int32: UInt] = [:]
        for index in 0..<Int(count) where wanted.contains(tids[index]) { found[tids[index]] = pointers[index] }
        return found
    }
}
