import Foundation
import StallMonitor
import StallReportKit
import Testing

/// Whether the kernel still lists thread `tid` of this process.
private func threadExists(_ tid: Int32) -> Bool {
    FileManager.default.fileExists(atPath: "/proc/self/task/\(tid)")
}

/// The kernel's name of thread `tid` of this process.
private func kernelThreadName(_ tid: Int32) -> String? {
    (try? String(contentsOfFile: "/proc/self/task/\(tid)/comm", encoding: .utf8))?
        .trimmingCharacters(in: .whitespacesAndNewlines)
}

/// This process's open descriptors that are anonymous inodes (eventfd, timerfd, epoll: what a
/// CF run loop opens), by number.
private func anonymousDescriptors() -> Set<String> {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return Set(
        names.filter { name in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)"))?.hasPrefix(
                "anon_inode:") == true
        })
}

private struct ExpectedFailure: Error, Equatable {}

/// A spin with a name to find in a report.
enum ResidentSpin {
    @inline(never)
    static func spinOnResidentThread(milliseconds: Int) {
        StallingWork.spinOnCPUForStallTest(milliseconds: milliseconds)
    }
}

@Suite("Resident loop thread", .serialized)
struct ResidentLoopThreadTests {
    @Test("runs work on its own named thread in submission order; performAndWait returns values and errors")
    func performsInOrder() throws {
        let resident = try ResidentLoopThread(name: "resident-order-thread")
        defer { resident.stop() }
        let log = RunLog()
        for sequence in 1...100 { #expect(resident.perform { log.record(sequence) }) }
        let tid = try resident.performAndWait { Kernel.currentThreadID() }
        #expect(log.sequences == Array(1...100), "work submitted before performAndWait ran before it")
        #expect(log.threads == [tid])
        #expect(tid != Kernel.currentThreadID())
        #expect(kernelThreadName(tid) == "resident-order-")  // the kernel keeps 15 bytes
        let foundationName = try resident.performAndWait { Thread.current.name }
        #expect(foundationName == "resident-order-", "Foundation reads the kernel's name on Linux")
        #expect(try resident.performAndWait { resident.isCurrent })
        #expect(!resident.isCurrent)
        #expect(throws: ExpectedFailure.self) { try resident.performAndWait { throw ExpectedFailure() } }
        // Called on the thread itself, performAndWait runs inline instead of waiting for itself.
        #expect(try resident.performAndWait { try resident.performAndWait { 42 } } == 42)
    }

    @Test("stop runs the work already submitted, then joins: the thread is gone and later work is refused")
    func stopJoins() throws {
        let resident = try ResidentLoopThread(name: "resident-stop")
        let tid = try resident.performAndWait { Kernel.currentThreadID() }
        let done = LockedBox(0)
        for _ in 1...20 {
            resident.perform {
                StallingWork.spinOnCPUForStallTest(milliseconds: 2)
                done.withLock { $0 += 1 }
            }
        }
        resident.stop()
        #expect(done.withLock { $0 } == 20)
        // pthread_join returned: the kernel may take a moment more to drop the task's entry.
        #expect(waitUntil(timeout: .seconds(2)) { !threadExists(tid) })
        #expect(!resident.perform {})
        #expect(throws: ResidentLoopThread.NotRunning.self) { try resident.performAndWait { 1 } }
        resident.stop()  // again: nothing more
    }

    @Test("threads started and stopped leave no run loop descriptor behind")
    func noDescriptorsLeft() throws {
        let before = anonymousDescriptors()
        var opened = Set<String>()
        for index in 0..<5 {
            let resident = try ResidentLoopThread(name: "resident-fd-\(index)")
            let queue = try resident.makeIdleWorkQueue()
            queue.submit {}
            #expect(waitUntil { queue.statistics.completed == 1 })
            opened.formUnion(try resident.performAndWait { anonymousDescriptors() }.subtracting(before))
            _ = queue.close()
            resident.stop()
        }
        #expect(!opened.isEmpty, "each thread's run loop opens descriptors")
        let left = anonymousDescriptors().intersection(opened)
        #expect(left.isEmpty, "still open after stop(): \(left.sorted())")
    }

    @Test("stop called from its own work returns at once; the thread ends when that work returns")
    func stopFromItself() throws {
        let resident = try ResidentLoopThread(name: "resident-self")
        let tid = try resident.performAndWait { Kernel.currentThreadID() }
        let after = LockedBox(false)
        resident.perform {
            resident.stop()
            after.withLock { $0 = true }
        }
        #expect(waitUntil(timeout: .seconds(5)) { !threadExists(tid) })
        #expect(after.withLock { $0 })
        resident.stop()  // from here it joins (already ended)
    }

    @Test("released without stop, the thread ends by itself")
    func releaseEndsThread() throws {
        var tid: Int32 = 0
        do {
            let resident = try ResidentLoopThread(name: "resident-drop")
            tid = try resident.performAndWait { Kernel.currentThreadID() }
        }
        #expect(tid != 0)
        #expect(waitUntil(timeout: .seconds(5)) { !threadExists(tid) })
    }

    @Test(
        "a monitored resident thread reports a stall of its very first work, with its name, and writes it before stop returns"
    )
    func monitoredFromFirstPass() throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        let resident = try ResidentLoopThread(
            name: "resident-mon", monitor: directory.configuration(threshold: .milliseconds(300)))
        let monitor = try #require(resident.monitor)
        resident.perform { ResidentSpin.spinOnResidentThread(milliseconds: 700) }
        #expect(waitUntil(timeout: .seconds(10)) { monitor.statistics.stallsDetected == 1 })
        resident.stop()
        #expect(monitor.statistics.reportsWritten == 1, "\(monitor.statistics)")
        let reports = try directory.reports()
        #expect(reports.count == 1)
        guard let report = reports.first else { return }
        #expect(report.loop.threadName == "resident-mon")
        #expect(!report.loop.isMainThread)
        #expect(report.anySampleNames("spinOnResidentThread"), "\(report.representativeSymbols)")
    }

    @Test("a monitor that cannot start fails the start, and no thread is left")
    func monitorStartFailure() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("resident-not-a-dir-\(getpid())")
        try Data("x".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(throws: StallMonitorError.self) {
            _ = try ResidentLoopThread(name: "resident-fail", monitor: .init(reportDirectory: file))
        }
    }

    @Test("an idle work queue on the resident thread runs its work there")
    func idleQueueOnResidentThread() throws {
        let resident = try ResidentLoopThread(name: "resident-idle")
        defer { resident.stop() }
        let tid = try resident.performAndWait { Kernel.currentThreadID() }
        let queue = try resident.makeIdleWorkQueue()
        let log = RunLog()
        for sequence in 1...30 { queue.submit { log.record(sequence) } }
        #expect(waitUntil(timeout: .seconds(10)) { queue.statistics.completed == 30 })
        #expect(log.sequences == Array(1...30))
        #expect(log.threads == [tid])
        #expect(queue.close().isEmpty)
    }
}
