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
        var runs: [SplitRun] = []
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
            while runs.filter(\.suspended).count < 5 && runs.count < 10 {
                runs.append(
                    await Task.detached { () -> SplitRun in
                        var run = SplitRun()
                        run.before = Self.enqueueMark()
                        Self.spin(milliseconds: 140)
                        await waker.sleep()
                        run.resumed = Date()
                        run.resumedOn = Kernel.currentThreadID()
                        run.after = Self.enqueueMark()
                        Self.spin(milliseconds: 140)
                        run.ended = Date()
                        return run
                    }.value)
            }
        }
        let split = runs.filter(\.suspended).count
        #expect(split >= 3, "\(split) of \(runs.count) tasks suspended")
        // Only a task that went on without suspending may be reported: one job on its thread, begun
        // within its life (a watchdog starved when the job began dates it from the middle of its pause).
        let unsplit = runs.filter { !$0.suspended }
        let unexplained = reports.filter { report in
            !unsplit.contains { $0.contains(report) }
        }
        let described = unexplained.map { report in
            "\(report.loop.kind) on \(report.loop.threadID), \(report.durationMs) ms, "
                + "\(report.representativeFunction); tasks: \(runs.map { $0.relative(to: report) })"
        }
        #expect(unexplained.isEmpty, "\(unsplit.count) unsplit: \(described)")
    }

    /// What one split task saw of itself: its marks in the enqueue hook's table and its own clock.
    struct SplitRun: Sendable {
        var task = PoolJobIdentityTests.currentTaskAddress()
        var started = Date()
        var startedOn = Kernel.currentThreadID()
        var before: UInt = 0
        var after: UInt = 0
        var resumed = Date()
        var resumedOn: Int32 = 0
        var ended = Date()

        /// Whether the task was enqueued again between its two bursts: its entry names it and changed.
        var suspended: Bool { after & ~15 == task && after != before }

        /// Whether `report` can be this run's one job: on the thread it ran on, begun within its life.
        func contains(_ report: StallReport) -> Bool {
            report.loop.threadID == Int(startedOn) && report.startedAt >= started.addingTimeInterval(-0.05)
                && report.startedAt <= ended
        }

        /// The run's times in ms from a report's start, its threads and marks (for a failure's message).
        func relative(to report: StallReport) -> String {
            func ms(_ date: Date) -> String { String(format: "%.1f", date.timeIntervalSince(report.startedAt) * 1000) }
            return "[\(ms(started)) on \(startedOn), \(ms(resumed)) on \(resumedOn), \(ms(ended)); "
                + "task \(String(task, radix: 16)) marks \(String(before, radix: 16))->\(String(after, radix: 16))]"
        }
    }

    /// The enqueue hook's table entry for the calling task (its address and a count of its writes;
    /// another value once the task was enqueued again).
    static func enqueueMark() -> UInt {
        var enqueuedAt: UInt64 = 0
        return CStallMonitor_pool_job_mark(currentTaskAddress(), &enqueuedAt)
    }

    /// The calling task's address (0 outside a task).
    static func currentTaskAddress() -> UInt {
        withUnsafeCurrentTask { task in task.map { unsafeBitCast($0, to: UInt.self) } } ?? 0
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
