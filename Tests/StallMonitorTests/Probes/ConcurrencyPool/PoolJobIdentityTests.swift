import CStallMonitor
import Foundation
import Glibc
import StallMonitor
import StallReportModel
import Testing

/// One job on the concurrency pool is one job to the monitor: jobs that follow one another on a
/// worker are told apart (a task freed and another made at its address, a task that suspended
/// and was resumed between two looks), and a long job is measured from its own start. Every
/// test runs with two CPU hogs on each CPU, and the test's own task only awaits.
@Suite("Pool job identity", .serialized)
struct PoolJobIdentityTests {
    @Test("short tasks made and finished back to back, and a task split by a 1 ms suspension, give no report")
    func backToBackShortJobsGiveNoReport() async throws {
        var split = 0
        var unsplitStarts: [Date] = []
        let reports = try await Self.watchingPool { _ in
            // Tasks made and finished in a loop for a second: each made where the one before was freed.
            let end = Kernel.monotonicNanoseconds() + 1_000_000_000
            while Kernel.monotonicNanoseconds() < end { _ = await Self.poolJob(spinMs: 3, blockMs: 0).value }
            // Two 140 ms bursts of one task around a 1 ms sleep: two jobs of 140 ms, one of 280 if merged.
            // A task preempted after handing its continuation over, for longer than the waker's 1 ms,
            // finds it resumed and goes on without suspending: one job of 280 ms, rightly reported.
            // The runtime enqueues a task it resumes, so the enqueue hook's entry for the task tells
            // which happened; five tasks that did suspend are needed.
            let waker = ContinuationWaker()
            defer { waker.stop() }
            while split < 5 && split + unsplitStarts.count < 10 {
                let (started, suspended) = await Task.detached { () -> (Date, Bool) in
                    let started = Date()
                    let before = Self.enqueueMark()
                    Self.spin(milliseconds: 140)
                    await waker.sleep()
                    let after = Self.enqueueMark()
                    Self.spin(milliseconds: 140)
                    return (started, after != before)
                }.value
                if suspended { split += 1 } else { unsplitStarts.append(started) }
            }
        }
        #expect(split >= 3, "\(split) of \(split + unsplitStarts.count) tasks suspended")
        // Only a task that went on without suspending may be reported: one job, begun with the task.
        let unexplained = reports.filter { report in
            !unsplitStarts.contains { abs(report.startedAt.timeIntervalSince($0)) < 0.05 }
        }
        #expect(
            unexplained.isEmpty,
            "\(unsplitStarts.count) unsplit: \(unexplained.map { ($0.loop.kind, $0.durationMs, $0.representativeFunction) })"
        )
    }

    /// The enqueue hook's table entry for the calling task (its address and a count of its writes;
    /// another value once the task was enqueued again).
    static func enqueueMark() -> UInt {
        let task = withUnsafeCurrentTask { task in task.map { unsafeBitCast($0, to: UInt.self) } } ?? 0
        var enqueuedAt: UInt64 = 0
        return CStallMonitor_pool_job_mark(task, &enqueuedAt)
    }

    @Test("a 400 ms blocking task right after 200 ms of tasks made at its address is reported with its own duration")
    func blockingJobAfterOtherJobsKeepsItsDuration() async throws {
        var measured: JobClock?
        let reports = try await Self.watchingPool { _ in
            let end = Kernel.monotonicNanoseconds() + 200_000_000
            while Kernel.monotonicNanoseconds() < end { _ = await Self.poolJob(spinMs: 2, blockMs: 0).value }
            measured = await Self.poolJob(spinMs: 0, blockMs: 400).value
        }
        let job = try #require(measured)
        let stalls = reports.filter { $0.starvation == nil }
        try #require(stalls.count == 1, "\(reports.map { ($0.loop.kind, $0.durationMs, $0.starvation != nil) })")
        let report = stalls[0]
        #expect(report.loop.kind == StallMonitor.concurrencyPoolKind)
        #expect(report.loop.threadID == Int(job.thread), "report on \(report.loop.threadID), job on \(job.thread)")
        // A job's end is dated in the middle of the interval between two looks: within 25 ms when
        // the watchdog looks on time, within half its longest pause when it was starved (seen in
        // the samples it took: a sanitizer's runtime, more CPU-bound threads than the hogs).
        let tolerance = max(25, Self.longestWatchdogPause(in: report) / 2 + 5)
        #expect(
            abs(report.durationMs - job.milliseconds) <= tolerance,
            "report \(report.durationMs) ms, job \(job.milliseconds) ms, tolerance \(tolerance) ms")
    }

    /// The longest time the watchdog took no sample during a report's stall (ms): between two
    /// samples, and from the last one to the stall's end.
    static func longestWatchdogPause(in report: StallReport) -> Double {
        let offsets = report.samples.map(\.offsetMs).sorted()
        guard let last = offsets.last else { return report.durationMs }
        let between = zip(offsets, offsets.dropFirst()).map { $1 - $0 }.max() ?? 0
        return max(between, report.durationMs - last)
    }

    /// A job's own clock: the worker that ran it and how long it ran, read inside it.
    struct JobClock: Sendable {
        var thread: Int32
        var milliseconds: Double
    }

    /// A detached task that spins `spinMs` and then blocks `blockMs` (one shape for every call,
    /// so that each task is made the same size as the one freed before it, at its address).
    static func poolJob(spinMs: UInt64, blockMs: UInt32) -> Task<JobClock, Never> {
        Task.detached {
            let start = Kernel.monotonicNanoseconds()
            spin(milliseconds: spinMs)
            if blockMs > 0 { usleep(blockMs * 1_000) }
            return JobClock(
                thread: Kernel.currentThreadID(), milliseconds: Double(Kernel.monotonicNanoseconds() - start) / 1e6)
        }
    }

    /// Keeps the CPU for `milliseconds` of wall-clock time.
    static func spin(milliseconds: UInt64) {
        let end = Kernel.monotonicNanoseconds() + milliseconds * 1_000_000
        while Kernel.monotonicNanoseconds() < end {}
    }

    /// Runs `body` with the pool watched (threshold 250 ms, a look every 5 ms) under two CPU hogs
    /// per CPU; returns the reports written once the monitor has flushed and stopped.
    static func watchingPool(
        label: String = #function, _ body: (StallMonitor) async throws -> Void
    ) async throws -> [StallReport] {
        let directory = ReportDirectory(label)
        defer { directory.remove() }
        let contention = CPUContention()
        defer { contention.stop() }
        let monitor = try StallMonitor.start(
            directory.configuration(), loops: [.concurrencyPool], pollInterval: .milliseconds(5))
        do {
            try await body(monitor)
        } catch {
            await monitor.stop()
            throw error
        }
        #expect(await monitor.flush(timeout: .seconds(10)))
        await monitor.stop()
        return try directory.reports()
    }
}

/// A 1 ms sleep of a task that suspends it: the task hands a continuation over and a thread of
/// the test resumes it 1 ms after it found it (a task preempted for longer in between finds it
/// resumed and does not suspend). `Task.sleep` does not do for this test
/// under load: its timer's enqueue may wake a worker that preempts the task before it awaits,
/// and when the timer's task resumes the continuation first, the task goes on without
/// suspending (one job, rightly reported as one). The thread polls: handing over wakes no one.
final class ContinuationWaker: Sendable {
    private let handed = LockedBox<CheckedContinuation<Void, Never>?>(nil)
    private let stopping = LockedBox(false)
    private let exited = DispatchSemaphore(value: 0)

    init() {
        let handed = self.handed
        let stopping = self.stopping
        let exited = self.exited
        Thread {
            while !stopping.withLock({ $0 }) {
                if let continuation = handed.withLock({ value in
                    defer { value = nil }
                    return value
                }) {
                    usleep(1_000)
                    continuation.resume()
                } else {
                    usleep(200)
                }
            }
            exited.signal()
        }.start()
    }

    /// Suspends the calling task for about 1 ms.
    func sleep() async {
        await withCheckedContinuation { continuation in handed.withLock { $0 = continuation } }
    }

    /// Stops the thread (after the last sleep) and waits for it.
    func stop() {
        stopping.withLock { $0 = true }
        exited.wait()
    }
}
