import Foundation
import Synchronization
import Testing

@testable import StallMonitor

/// A loop whose thread changes from span to span (the Dispatch main queue): each span carries its
/// thread, and the watch samples and reports the thread that ran it, one it never armed.
@Suite("A loop whose thread changes from span to span", .serialized)
struct ThreadPerSpanTests {
    @Test("two stalls on two threads that never armed are each sampled and reported on their own thread")
    func twoThreads() throws {
        MonitorProcess.shared.unwinder.retain()
        defer { MonitorProcess.shared.unwinder.release() }
        let harness = ThreadWatchHarness()
        var threads: [(tid: Int32, name: String)] = []
        for index in 1...2 {
            let sleeper = SleepingThread(name: "span-thread-\(index)", milliseconds: 400)
            let tid = sleeper.tid
            threads.append((tid, "span-thread-\(index)"))
            harness.tracker.spanBegan(at: sleeper.startedAt, switches: 0, thread: tid)
            while !sleeper.finished {
                _ = harness.watch.step(now: Kernel.monotonicNanoseconds())
                usleep(10_000)
            }
            harness.tracker.spanEnded(at: sleeper.endedAt)
            _ = harness.watch.step(now: Kernel.monotonicNanoseconds())
            sleeper.join()
        }
        let stalls = harness.endedStalls
        try #require(stalls.count == 2, "\(harness.emitted.count) events")
        for (stall, thread) in zip(stalls, threads) {
            #expect(stall.thread.tid == thread.tid)
            #expect(stall.thread.name == thread.name)
            #expect(!stall.thread.isMainThread)
            let duration = stall.end &- stall.spanStart
            #expect(duration >= 380 * ThreadWatchHarness.ms && duration < 5_000 * ThreadWatchHarness.ms)
            if stall.unwinder.snapshot != nil {
                // Asleep in nanosleep: unwound from /proc without a signal, its stack found from
                // /proc/self/maps (the thread never armed itself).
                #expect(
                    stall.samples.contains { $0.kind == .stack && $0.syscall != nil }, "\(stall.samples.map(\.note))")
            }
        }
    }

    @Test("a long span on another thread that ended before the watchdog looked is reported with that thread")
    func missedSpanNamesItsThread() throws {
        let harness = ThreadWatchHarness()
        let ms = ThreadWatchHarness.ms
        _ = harness.watch.step(now: Kernel.monotonicNanoseconds())  // meets the armed thread
        let sleeper = SleepingThread(name: "missed-span", milliseconds: 1)
        sleeper.join()
        let start = Kernel.monotonicNanoseconds()
        harness.tracker.spanBegan(at: start, switches: 0, thread: sleeper.tid)
        harness.tracker.spanEnded(at: start + 400 * ms)
        _ = harness.watch.step(now: start + 401 * ms)
        let stalls = harness.endedStalls
        try #require(stalls.count == 1)
        #expect(stalls[0].thread.tid == sleeper.tid)
        #expect(stalls[0].skipped["watchdogStarved"] == 1)
    }
}

/// A thread that names itself, publishes its kernel id and sleeps `milliseconds` in `usleep`.
final class SleepingThread: @unchecked Sendable {
    private let facts = Locked<(tid: Int32, startedAt: UInt64, endedAt: UInt64)>((0, 0, 0))
    private let exited = DispatchSemaphore(value: 0)

    init(name: String, milliseconds: Int) {
        let facts = self.facts
        let exited = self.exited
        let thread = Thread {
            Kernel.nameCurrentThread(name)
            let started = Kernel.monotonicNanoseconds()
            facts.withLock { $0 = (Kernel.currentThreadID(), started, 0) }
            usleep(UInt32(milliseconds) * 1_000)
            let ended = Kernel.monotonicNanoseconds()
            facts.withLock { $0.endedAt = ended }
            exited.signal()
        }
        thread.start()
        while facts.withLock({ $0.tid }) == 0 { usleep(1_000) }
    }

    var tid: Int32 { facts.withLock { $0.tid } }
    var startedAt: UInt64 { facts.withLock { $0.startedAt } }
    var endedAt: UInt64 { facts.withLock { $0.endedAt } }
    var finished: Bool { endedAt != 0 }

    func join() {
        exited.wait()
        exited.signal()
    }
}
