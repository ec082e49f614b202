import CStallMonitor
import Dispatch
import Foundation
import Glibc
import Synchronization
import Testing

@testable import StallMonitor

/// When a queue whose enqueues wake the watchdog (the pool) counts as quiet again after an
/// enqueue: after the grace period (five intervals, at least 50 ms), or at the first look that
/// finds it settled (no job can be on its way). An idle Hummingbird server's one-second timer
/// job cost seven looks a second, then three (settled one interval after the enqueue), now two (the
/// enqueue's, and the quick look after it: `QuickLookAfterWakeTests`).
@Suite("Enqueue wake schedule")
struct EnqueueWakeScheduleTests {
    private static let millisecond: UInt64 = 1_000_000

    /// A schedule bound to a wake-up slot, an enqueue noted at `enqueuedAt`.
    private static func schedule(enqueuedAt: UInt64) -> EnqueueWakeSchedule {
        var schedule = EnqueueWakeSchedule(interval: 20 * millisecond, takeFlag: { _ in true }, arm: { _, _ in })
        _ = schedule.prepareToSleep(offering: 3) { _ in }
        _ = schedule.noteEnqueues(now: enqueuedAt)
        return schedule
    }

    @Test("settled, the queue is quiet at the first look that finds it so; not settled, only after the grace period")
    func settledEndsTheGraceEarly() {
        let start: UInt64 = 1_000 * Self.millisecond
        var settled = Self.schedule(enqueuedAt: start)
        #expect(settled.settledEndsGrace(now: start), "the look that took the enqueue")
        #expect(settled.settledEndsGrace(now: start + 2 * Self.millisecond))
        _ = settled.nextLook(now: start, idle: true, settled: false)
        #expect(!settled.quiet, "the worker that takes the job is not asleep yet")
        let next = settled.nextLook(now: start + 2 * Self.millisecond, idle: true, settled: true)
        #expect(settled.quiet)
        #expect(next == start + 2 * Self.millisecond + sleepingLookInterval)

        var unsettled = Self.schedule(enqueuedAt: start)
        _ = unsettled.nextLook(now: start + 22 * Self.millisecond, idle: true, settled: false)
        #expect(!unsettled.quiet)
        _ = unsettled.nextLook(now: start + 99 * Self.millisecond, idle: true, settled: false)
        #expect(!unsettled.quiet)
        _ = unsettled.nextLook(now: start + 100 * Self.millisecond, idle: true, settled: false)
        #expect(unsettled.quiet)
        #expect(!unsettled.settledEndsGrace(now: start + 100 * Self.millisecond), "past the grace: nothing to check")

        var busy = Self.schedule(enqueuedAt: start)
        _ = busy.nextLook(now: start + 22 * Self.millisecond, idle: false, settled: true)
        #expect(!busy.quiet, "a queue its probe keeps busy is never quiet")
    }

    @Test(
        "a job no producer told of is dated from the last interval after a sleep by plan (a Task.sleep's timer), from any time after a busy look"
    )
    func unknownStartAfterQuietSleep() {
        let start: UInt64 = 1_000 * Self.millisecond
        var schedule = Self.schedule(enqueuedAt: start)
        _ = schedule.nextLook(now: start, idle: false)
        #expect(!schedule.quiet)
        #expect(
            schedule.earliestUnknownStart(now: start + 20 * Self.millisecond) == 0,
            "busy: the look came an interval ago")
        let settledAt = start + 22 * Self.millisecond
        let wakeAt = schedule.nextLook(now: settledAt, idle: true, settled: true)
        #expect(schedule.quiet && wakeAt == settledAt + sleepingLookInterval)
        // The look that ends the planned 2 s sleep finds a job the hook never saw (the sleep task
        // a dispatch timer runs): it began no earlier than one interval before the look, not
        // somewhere in the whole sleep (whose middle is a second back: a false stall).
        #expect(schedule.earliestUnknownStart(now: wakeAt) == wakeAt - 20 * Self.millisecond)
        _ = schedule.noteEnqueues(now: wakeAt)
        _ = schedule.nextLook(now: wakeAt, idle: false)
        #expect(schedule.earliestUnknownStart(now: wakeAt + 20 * Self.millisecond) == 0, "busy again")
    }

    @Test(
        "a thread waiting on a semaphore is asleep; a running thread, the caller and a thread that does not exist are not"
    )
    func threadAsleep() async throws {
        let tid = Atomic<Int32>(0)
        let release = DispatchSemaphore(value: 0)
        let waiter = Thread {
            tid.store(CStallMonitor_gettid(), ordering: .sequentiallyConsistent)
            release.wait()
        }
        waiter.start()
        let spin = Atomic<Bool>(true)
        let spinnerTid = Atomic<Int32>(0)
        let spinner = Thread {
            spinnerTid.store(CStallMonitor_gettid(), ordering: .sequentiallyConsistent)
            while spin.load(ordering: .relaxed) {}
        }
        spinner.start()
        defer {
            release.signal()
            spin.store(false, ordering: .relaxed)
        }
        while tid.load(ordering: .sequentiallyConsistent) == 0 { try await Task.sleep(for: .milliseconds(1)) }
        // One file, kept open and read again: each read says the thread's state then.
        let waitingFile = ThreadStatFile(tid: tid.load(ordering: .sequentiallyConsistent))
        var asleep = false
        for _ in 0..<500 where !asleep {
            asleep = waitingFile.isAsleep()
            if !asleep { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(asleep, "the waiting thread never showed as asleep")
        while spinnerTid.load(ordering: .sequentiallyConsistent) == 0 { try await Task.sleep(for: .milliseconds(1)) }
        // Spinning, it is running or runnable (preempted), never asleep.
        let spinnerFile = ThreadStatFile(tid: spinnerTid.load(ordering: .sequentiallyConsistent))
        for _ in 0..<20 { #expect(!spinnerFile.isAsleep()) }
        #expect(!ThreadStatFile(tid: CStallMonitor_gettid()).isAsleep())
        #expect(!ThreadStatFile(tid: Int32.max).isAsleep())
    }
}
