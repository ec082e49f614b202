import Foundation
import StallMonitor
import Testing

/// What idle work recorded as it ran: its sequence and thread.
final class RunLog: Sendable {
    private let entries = LockedBox<[(sequence: Int, tid: Int32)]>([])
    func record(_ sequence: Int) { entries.withLock { $0.append((sequence, Kernel.currentThreadID())) } }
    var sequences: [Int] { entries.withLock { $0.map(\.sequence) } }
    var threads: Set<Int32> { entries.withLock { Set($0.map(\.tid)) } }
}

/// Drops reported to a queue's `onDrop`.
private final class DropLog: Sendable {
    private let entries = LockedBox<[(label: String?, reason: UnrunIdleWork.Reason)]>([])
    func record(_ drop: UnrunIdleWork) { entries.withLock { $0.append((drop.ticket.label, drop.reason)) } }
    var all: [(label: String?, reason: UnrunIdleWork.Reason)] { entries.withLock { $0 } }
}

@Suite("Idle-time work queue", .serialized)
struct IdleWorkQueueTests {
    /// A queue on `loop`'s run loop, created on that thread.
    private func makeQueue(
        on loop: MonitoredLoopThread, _ configuration: IdleWorkQueue.Configuration = .init()
    ) throws -> IdleWorkQueue {
        try loop.run { Result { () throws(StallMonitorError) in try IdleWorkQueue(loop: .current, configuration) } }
            .get()
    }

    @Test("work submitted from another thread runs on the loop's thread, in order, at most a budget's worth per pass")
    func runsInOrderWithinBudget() throws {
        let loop = try MonitoredLoopThread(name: "idle-order")
        defer { loop.stop() }
        let queue = try makeQueue(on: loop, .init(budget: .milliseconds(4)))
        let log = RunLog()
        for sequence in 1...50 {
            queue.submit(label: "item \(sequence)") {
                log.record(sequence)
                StallingWork.spinOnCPUForStallTest(milliseconds: 1)
            }
        }
        #expect(waitUntil(timeout: .seconds(20)) { queue.statistics.completed == 50 })
        #expect(log.sequences == Array(1...50))
        #expect(log.threads == [loop.tid])
        let statistics = queue.statistics
        // Each item takes at least 1 ms, and no item starts once 4 ms of the pass have gone: at
        // most 4 items per pass.
        #expect(statistics.passes >= 13 && statistics.passes <= 50, "\(statistics)")
        #expect(statistics.pending == 0)
        #expect(statistics.submitted == 50)
        // The loop went back to sleep once the work was done.
        try loop.waitUntilSleeping()
    }

    @Test("an item longer than the budget runs whole, alone in its pass, and is counted")
    func longItemRunsAlone() throws {
        let loop = try MonitoredLoopThread(name: "idle-long")
        defer { loop.stop() }
        let queue = try makeQueue(on: loop, .init(budget: .milliseconds(2)))
        let tickets = (1...5).map { _ in queue.submit { StallingWork.spinOnCPUForStallTest(milliseconds: 6) } }
        #expect(waitUntil(timeout: .seconds(20)) { queue.statistics.completed == 5 })
        let statistics = queue.statistics
        #expect(statistics.passes == 5, "\(statistics)")
        #expect(statistics.itemsOverBudget == 5)
        #expect(statistics.longestItem >= .milliseconds(6))
        #expect(tickets.allSatisfy { $0.status == .completed })
    }

    @Test("the loop handles other work between passes while a backlog drains")
    func loopStaysResponsive() throws {
        let loop = try MonitoredLoopThread(name: "idle-responsive")
        defer { loop.stop() }
        let queue = try makeQueue(on: loop, .init(budget: .milliseconds(2)))
        for _ in 1...100 { queue.submit { StallingWork.spinOnCPUForStallTest(milliseconds: 5) } }
        #expect(waitUntil(timeout: .seconds(20)) { queue.statistics.completed >= 10 })
        let completedBefore = queue.statistics.completed
        // A block for the loop: it runs at the start of the next pass, after the item running now.
        let completedWhenRun = try loop.run { queue.statistics.completed }
        #expect(completedWhenRun <= completedBefore + 2, "block waited for \(completedWhenRun - completedBefore) items")
        #expect(completedWhenRun < 100)
        #expect(waitUntil(timeout: .seconds(20)) { queue.statistics.completed == 100 })
    }

    @Test("a full queue drops the oldest waiting work and says so; cancelled work never runs")
    func capacityAndCancellation() throws {
        let loop = try MonitoredLoopThread(name: "idle-capacity")
        defer { loop.stop() }
        let drops = DropLog()
        let queue = try makeQueue(on: loop, .init(capacity: 4, onDrop: { drops.record($0) }))
        let log = RunLog()
        // Submitted inside one callout of the loop: nothing can run before the callout returns.
        let (tickets, cancelledTwice) = try loop.run { () -> ([IdleWorkTicket], Bool) in
            let tickets = (1...10).map { sequence in queue.submit(label: "item \(sequence)") { log.record(sequence) } }
            let cancelled = tickets[7].cancel()
            return (tickets, cancelled && !tickets[7].cancel())
        }
        #expect(cancelledTwice)
        #expect(waitUntil(timeout: .seconds(10)) { queue.statistics.pending == 0 })
        #expect(log.sequences == [7, 9, 10])
        #expect(drops.all.map(\.label) == (1...6).map { "item \($0)" })
        #expect(drops.all.allSatisfy { $0.reason == .capacity })
        #expect(tickets[0..<6].allSatisfy { $0.status == .dropped })
        #expect(tickets[7].status == .cancelled)
        #expect(!tickets[6].cancel(), "a completed ticket cannot be cancelled")
        let statistics = queue.statistics
        #expect(
            statistics.submitted == 10 && statistics.dropped == 6 && statistics.cancelled == 1
                && statistics.completed == 3,
            "\(statistics)")

        let allCancelled = try loop.run { () -> Int in
            for sequence in 11...13 { queue.submit { log.record(sequence) } }
            return queue.cancelAll()
        }
        #expect(allCancelled == 3)
        usleep(50_000)
        #expect(log.sequences == [7, 9, 10])
    }

    @Test(
        "close hands back the work that did not run; later work and a released queue's work are dropped, never lost silently"
    )
    func shutdownAccountsForEveryItem() throws {
        let loop = try MonitoredLoopThread(name: "idle-close")
        defer { loop.stop() }
        let drops = DropLog()
        let queue = try makeQueue(on: loop, .init(onDrop: { drops.record($0) }))
        let log = RunLog()
        let handedBack = try loop.run { () -> [UnrunIdleWork] in
            for sequence in 1...3 { queue.submit(label: "item \(sequence)") { log.record(sequence) } }
            return queue.close()
        }
        #expect(handedBack.map(\.ticket.label) == ["item 1", "item 2", "item 3"])
        #expect(handedBack.allSatisfy { $0.reason == .handedBack && $0.ticket.status == .handedBack })
        let late = queue.submit(label: "late") { log.record(99) }
        #expect(late.status == .dropped)
        #expect(drops.all.map(\.label) == ["late"] && drops.all.first?.reason == .closed)
        #expect(queue.close().isEmpty)
        usleep(50_000)
        #expect(log.sequences.isEmpty)
        handedBack[1].work()
        #expect(log.sequences == [2])

        // Released without close(): its waiting work is dropped with reason `released`.
        let releasedDrops = DropLog()
        try loop.run { () -> Result<Void, StallMonitorError> in
            Result { () throws(StallMonitorError) in
                let released = try IdleWorkQueue(loop: .current, .init(onDrop: { releasedDrops.record($0) }))
                released.submit(label: "a") {}
                released.submit(label: "b") {}
            }
        }.get()
        #expect(releasedDrops.all.map(\.label) == ["a", "b"])
        #expect(releasedDrops.all.allSatisfy { $0.reason == .released })
    }

    @Test(
        "an item that releases the last reference to its queue ends it safely; the waiting work is dropped as released")
    func releasedByItsOwnItem() throws {
        let loop = try MonitoredLoopThread(name: "idle-self-release")
        defer { loop.stop() }
        let drops = DropLog()
        let holder = LockedBox<IdleWorkQueue?>(nil)
        let ran = LockedBox(0)
        // Created and filled inside one callout: afterwards the holder has the only reference.
        try loop.run { () -> Result<Void, StallMonitorError> in
            Result { () throws(StallMonitorError) in
                let queue = try IdleWorkQueue(loop: .current, .init(onDrop: { drops.record($0) }))
                holder.withLock { $0 = queue }
                queue.submit(label: "releaser") {
                    ran.withLock { $0 += 1 }
                    holder.withLock { $0 = nil }
                }
                queue.submit(label: "after") { ran.withLock { $0 += 1 } }
            }
        }.get()
        #expect(waitUntil { drops.all.count == 1 })
        #expect(drops.all.first?.label == "after" && drops.all.first?.reason == .released)
        #expect(ran.withLock { $0 } == 1)
        // The loop goes on working normally.
        #expect(try loop.run { 7 } == 7)
    }

    @Test("submissions from several threads all run once, each thread's in its own order")
    func concurrentSubmitters() throws {
        let loop = try MonitoredLoopThread(name: "idle-threads")
        defer { loop.stop() }
        let queue = try makeQueue(on: loop)
        let log = RunLog()
        DispatchQueue.concurrentPerform(iterations: 4) { submitter in
            for index in 0..<250 { queue.submit { log.record(submitter * 1_000 + index) } }
        }
        #expect(waitUntil(timeout: .seconds(20)) { queue.statistics.completed == 1_000 })
        let sequences = log.sequences
        #expect(sequences.count == 1_000)
        for submitter in 0..<4 {
            let own = sequences.filter { $0 / 1_000 == submitter }
            #expect(own == Array(submitter * 1_000..<submitter * 1_000 + 250))
        }
        #expect(log.threads == [loop.tid])
    }

    @Test("invalid budgets and capacities are refused")
    func invalidConfiguration() {
        #expect(throws: StallMonitorError.self) { try IdleWorkQueue(loop: .main, .init(budget: .zero)) }
        #expect(throws: StallMonitorError.self) { try IdleWorkQueue(loop: .main, .init(capacity: 0)) }
    }
}
