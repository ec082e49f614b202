import Foundation
import Synchronization
import Testing

@testable import StallMonitor

/// When a running thread may be signalled, on a loaded machine: a thread shown running (it ran
/// enough between two readings without sleeping) stays signallable while it is kept off the CPU,
/// until it sleeps. A real spinning thread gives the scheduler state and the voluntary switches;
/// its CPU clock is given by hand, and no unwinder is there, so an attempt that would signal
/// says `noUnwinder` instead of signalling.
@Suite("Sampling a thread kept off the CPU", .serialized)
struct OffCPUSamplingTests {
    static let ms: UInt64 = 1_000_000

    /// A thread that spins without a syscall (no voluntary switch) until told to sleep once.
    final class Spinner: @unchecked Sendable {
        let tid = Atomic<Int32>(0)
        let stop = Atomic<Bool>(false)
        let sleepsAsked = Atomic<Int>(0)
        let sleepsDone = Atomic<Int>(0)

        init() {
            Thread { [self] in
                tid.store(Kernel.currentThreadID(), ordering: .releasing)
                while !stop.load(ordering: .relaxed) {
                    if sleepsAsked.load(ordering: .relaxed) > sleepsDone.load(ordering: .relaxed) {
                        usleep(2_000)
                        sleepsDone.add(1, ordering: .releasing)
                    }
                }
            }.start()
            while tid.load(ordering: .acquiring) == 0 { usleep(1_000) }
        }

        /// Makes the thread sleep once (a voluntary switch) and waits until it has.
        func sleepOnce() {
            let target = sleepsAsked.add(1, ordering: .relaxed).newValue
            while sleepsDone.load(ordering: .acquiring) < target { usleep(1_000) }
        }
    }

    /// A CPU clock the test moves by hand.
    final class HandClock: @unchecked Sendable {
        var nanos: Int64 = 0
    }

    static func sampler(_ clock: HandClock) -> ThreadSampler {
        let sampler = ThreadSampler(
            settings: .init(
                signal: 0, sampleTimeout: 10 * ms, maxFrames: 64, stackCopyBytes: 65_536, unwinding: .snapshot),
            counters: MonitorCounters(), knownBounds: { _ in nil })
        sampler.threadCPUNanos = { _ in clock.nanos }
        sampler.samplingHandlerInstalled = { true }
        return sampler
    }

    /// A spinning thread, its /proc files, a CPU clock moved by hand and a sampler reading both.
    static func spinningThread() -> (Spinner, ThreadProcFiles, HandClock, ThreadSampler) {
        let spinner = Spinner()
        let clock = HandClock()
        return (spinner, ThreadProcFiles(tid: spinner.tid.load(ordering: .acquiring)), clock, sampler(clock))
    }

    static let noUnwinder = SamplingUnwinder(name: .unavailable, snapshot: nil, note: "no unwinder in this test")

    /// What one attempt at `now` (ms) gave: `signal` (it would have been signalled), `again`, or the skip reason.
    static func attempt(_ sampler: ThreadSampler, _ files: ThreadProcFiles, at now: UInt64) -> String {
        switch sampler.sample(files, now: now * ms, spanStart: 0, interval: 10 * ms, unwinder: noUnwinder).0 {
        case .noStack(.noUnwinder, _): return "signal"
        case .noStack(let reason, _): return reason.rawValue
        case .lookAgain: return "again"
        default: return "other"
        }
    }

    @Test("a thread shown running is signalled after it barely ran since (kept off the CPU), until it sleeps")
    func provenThenPreempted() {
        let (spinner, files, clock, sampler) = Self.spinningThread()
        defer { spinner.stop.store(true, ordering: .relaxed) }
        #expect(Self.attempt(sampler, files, at: 0) == "again")  // a first reading proves nothing
        clock.nanos += 200_000
        #expect(Self.attempt(sampler, files, at: 10) == "signal")  // ran 200 µs without sleeping
        clock.nanos += 5_000
        #expect(Self.attempt(sampler, files, at: 20) == "signal")  // ran 5 µs: preempted, not asleep
        #expect(Self.attempt(sampler, files, at: 30) == "signal")  // did not run at all
        spinner.sleepOnce()
        clock.nanos += 5_000
        #expect(Self.attempt(sampler, files, at: 40) == "notClearlyRunning")  // it slept since
    }

    @Test("a thread never shown running is looked at again every millisecond, then not sampled")
    func neverProven() {
        let (spinner, files, clock, sampler) = Self.spinningThread()
        defer { spinner.stop.store(true, ordering: .relaxed) }
        #expect(Self.attempt(sampler, files, at: 0) == "again")
        var results: [String] = []
        for step in 1...(ThreadSampler.maxOffCPURetries + 1) {
            clock.nanos += 1_000  // 1 µs a look: less than the 100 µs that shows it running
            results.append(Self.attempt(sampler, files, at: UInt64(step)))
        }
        #expect(results.dropLast().allSatisfy { $0 == "again" }, "\(results)")
        #expect(results.last == "notClearlyRunning")
        // Running enough since the first reading proves it after all.
        clock.nanos += 200_000
        #expect(Self.attempt(sampler, files, at: 30) == "signal")
    }
}
