import Foundation
import Synchronization
import Testing

@testable import StallMonitor

/// The pool probe's witness of when a job ended, on real threads under two CPU hogs per CPU: a
/// thread that ran a CPU-bound burst and then fell asleep is dated at the burst's end however
/// late it is looked at again; a thread asleep at the first reading, or one that slept during the
/// burst, gives no date (the probe then keeps the middle of the interval).
@Suite("Job end witness", .serialized)
struct JobEndWitnessTests {
    /// A thread that runs `bursts` CPU-bound bursts of `milliseconds` each (a 5 ms sleep between
    /// two), or first sleeps `asleepFirst` ms, then waits until released.
    final class BurstThread: Sendable {
        let started = DispatchSemaphore(value: 0)
        let spun = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let exited = DispatchSemaphore(value: 0)
        let tid = Atomic<Int32>(0)
        /// The thread's own clock when its last burst ended.
        let burstEnded = Atomic<UInt64>(0)

        init(bursts: Int, milliseconds: UInt64, asleepFirst: UInt32 = 0) {
            let thread = Thread { [self] in
                tid.store(Kernel.currentThreadID(), ordering: .relaxed)
                started.signal()
                if asleepFirst > 0 { usleep(asleepFirst * 1000) }
                for burst in 0..<bursts {
                    if burst > 0 { usleep(5000) }
                    PoolJobIdentityTests.spin(milliseconds: milliseconds)
                }
                burstEnded.store(Kernel.monotonicNanoseconds(), ordering: .relaxed)
                spun.signal()
                release.wait()
                exited.signal()
            }
            thread.start()
            started.wait()
        }

        func stop() {
            release.signal()
            exited.wait()
        }
    }

    /// Reads the witness 50 ms into the thread's bursts, then waits for their end. A reading the
    /// test's own thread took longer than a millisecond over (preempted by the hogs) is not one,
    /// so a few are tried.
    static func readingDuringBursts(of thread: BurstThread) throws -> JobEndWitness {
        usleep(50_000)
        var witness: JobEndWitness?
        for _ in 0..<20 where witness == nil {
            witness = JobEndWitness.read(tid: thread.tid.load(ordering: .relaxed), keeping: nil)
            if witness == nil { usleep(2000) }
        }
        thread.spun.wait()
        return try #require(witness, "no reading while the thread ran")
    }

    /// The time the hypervisor has taken from this machine's CPUs (the steal figure of
    /// `/proc/stat`'s first line, all CPUs together), in milliseconds; 0 when it cannot be read.
    static func stolenMilliseconds() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = text.split(separator: "\n").first, line.hasPrefix("cpu ")
        else { return 0 }
        let fields = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard fields.count > 7 else { return 0 }
        return fields[7] * 1000 / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    @Test("a burst that ended long before the next look is dated at its end, not in the middle of the interval")
    func burstThenSleep() throws {
        let contention = CPUContention()
        defer { contention.stop() }
        let stolenBefore = Self.stolenMilliseconds()
        let thread = BurstThread(bursts: 1, milliseconds: 300)
        defer { thread.stop() }
        let witness = try Self.readingDuringBursts(of: thread)
        // The late look: 600 ms after the burst ended; the middle of the interval from the reading
        // (about 250 ms before the end) would be about 175 ms late.
        usleep(600_000)
        let now = Kernel.monotonicNanoseconds()
        let stopped = try #require(witness.stoppedRunning(before: now), "no date for a thread that slept once")
        let ended = thread.burstEnded.load(ordering: .relaxed)
        let offsetMs = (Double(stopped) - Double(ended)) / 1e6
        // Early by time the hypervisor took from the thread (not counted as runnable: at most what
        // it took from all CPUs, counted in ticks) and by the reading's own time (at most 1 ms);
        // late by the thread's way from its clock to its wait, a run-queue wait under the hogs included.
        let stolen = Self.stolenMilliseconds() - stolenBefore
        #expect(
            offsetMs >= -(25 + stolen) && offsetMs <= 100,
            "dated \(offsetMs) ms from the burst's end, \(stolen) ms stolen")
        let middle = witness.readAt + (now - witness.readAt) / 2
        #expect(middle > ended + 100_000_000, "the middle of the interval would have been close too")
    }

    @Test("a thread asleep at the reading gives none; one that slept during its burst gives no date")
    func noDateWhenTheThreadSlept() throws {
        let contention = CPUContention()
        defer { contention.stop() }
        let asleep = BurstThread(bursts: 1, milliseconds: 10, asleepFirst: 200)
        defer { asleep.stop() }
        usleep(50_000)
        #expect(JobEndWitness.read(tid: asleep.tid.load(ordering: .relaxed), keeping: nil) == nil)

        let twice = BurstThread(bursts: 2, milliseconds: 150)
        defer { twice.stop() }
        let witness = try Self.readingDuringBursts(of: twice)
        usleep(100_000)
        #expect(witness.stoppedRunning(before: Kernel.monotonicNanoseconds()) == nil)
    }
}
