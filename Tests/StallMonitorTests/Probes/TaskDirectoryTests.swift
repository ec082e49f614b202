import CStallMonitor
import Foundation
import Synchronization
import Testing

@testable import StallMonitor

/// `/proc/self/task` kept open: its count and its ids follow threads that start and exit.
@Suite("TaskDirectory", .serialized)
struct TaskDirectoryTests {
    @Test("one open directory counts and lists a thread that starts, then forgets it once it exited")
    func followsThreads() async throws {
        let directory = TaskDirectory()
        #expect(Self.countsAgree(directory))
        #expect(directory.threadIDs().contains(CStallMonitor_gettid()))

        let tid = Atomic<Int32>(0)
        let release = DispatchSemaphore(value: 0)
        let thread = Thread {
            tid.store(CStallMonitor_gettid(), ordering: .sequentiallyConsistent)
            release.wait()
        }
        thread.start()
        while tid.load(ordering: .sequentiallyConsistent) == 0 { try await Task.sleep(for: .milliseconds(1)) }
        let started = tid.load(ordering: .sequentiallyConsistent)
        #expect(directory.threadIDs().contains(started))
        // The same descriptor, read again: the kernel counts at each `fstat`.
        #expect(Self.countsAgree(directory))

        release.signal()
        var gone = false
        for _ in 0..<500 where !gone {
            gone = !directory.threadIDs().contains(started)
            if !gone { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(gone, "thread \(started) still listed after it exited")
    }

    /// Whether the open directory's count equals a fresh `stat` of the path and the number of ids
    /// it lists: the test process's other threads may come and go between two readings, so the
    /// three are read again until they agree (at most 50 times).
    private static func countsAgree(_ directory: TaskDirectory) -> Bool {
        for _ in 0..<50 {
            let kept = directory.threadCount()
            let fresh = PoolWorkerScan.threadCount()
            let listed = directory.threadIDs().count
            if kept != nil, kept == fresh, kept == listed { return true }
            usleep(1_000)
        }
        return false
    }
}
