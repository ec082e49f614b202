import StallReportKit
import Testing

@testable import StallMonitor

@Suite("StallClassifier")
struct StallClassifierTests {
    private static let ms: UInt64 = 1_000_000

    private func classify(
        duration: UInt64 = 400 * ms, passes: Int = 1, longestPass: UInt64 = 400 * ms, cpu: Int64,
        observed: UInt64 = 300 * ms, states: [String] = []
    ) -> StallClassification {
        StallClassifier.classify(
            duration: duration, passes: passes, longestPass: longestPass, cpu: cpu, observed: observed,
            states: states.map(SchedulerState.init(rawValue:)))
    }

    @Test("CPU share of the observed window decides cpu, blocked or mixed")
    func cpuShare() {
        #expect(classify(cpu: Int64(290 * Self.ms)) == .cpu)
        #expect(classify(cpu: Int64(210 * Self.ms)) == .cpu)  // exactly 0.7
        #expect(classify(cpu: Int64(5 * Self.ms)) == .blocked)
        #expect(classify(cpu: Int64(90 * Self.ms)) == .blocked)  // exactly 0.3
        #expect(classify(cpu: Int64(150 * Self.ms)) == .mixed)
    }

    @Test("many short passes are congestion whatever the CPU share")
    func congestion() {
        #expect(classify(passes: 2_000, longestPass: 2 * Self.ms, cpu: Int64(300 * Self.ms)) == .congestion)
        #expect(classify(passes: 8, longestPass: 100 * Self.ms, cpu: Int64(300 * Self.ms)) == .congestion)
        // One long pass among many is not congestion.
        #expect(classify(passes: 50, longestPass: 200 * Self.ms, cpu: Int64(300 * Self.ms)) == .cpu)
        #expect(classify(passes: 7, longestPass: 10 * Self.ms, cpu: Int64(300 * Self.ms)) == .cpu)
    }

    @Test("without CPU time, the known sampled states decide, however few")
    func statesFallback() {
        #expect(classify(cpu: -1, states: ["R", "R", "R", "R", "?"]) == .cpu)
        #expect(classify(cpu: -1, states: ["S", "D", "S", "S"]) == .blocked)
        #expect(classify(cpu: -1, states: ["R", "S", "R", "S"]) == .mixed)
        #expect(classify(cpu: -1, states: ["R", "R", "R", "?"]) == .cpu, "every known state R")
        #expect(classify(cpu: -1, states: ["?", "?"]) == .mixed, "no known state")
        #expect(classify(cpu: -1, states: []) == .mixed)
        #expect(classify(cpu: 100, observed: 0, states: ["S"]) == .blocked)
    }

    @Test("a short stall whose few samples were all R is cpu even with a small CPU share (the README's rule)")
    func fewRunnableSamples() {
        // A spinning thread sharing its CPU, cut off by stop() after one or two samples.
        #expect(classify(cpu: Int64(120 * Self.ms), states: ["R"]) == .cpu)
        #expect(classify(cpu: Int64(40 * Self.ms), states: ["R", "R"]) == .cpu)
        #expect(classify(cpu: Int64(40 * Self.ms), states: ["R", "S"]) == .mixed)
        #expect(classify(cpu: Int64(40 * Self.ms), states: ["S", "S"]) == .blocked)
    }

    @Test("a thread runnable in most samples is cpu even when it got little CPU time (loaded machine)")
    func runnableSamplesCount() {
        let runnable = Array(repeating: "R", count: 9) + ["S"]
        #expect(classify(cpu: Int64(120 * Self.ms), states: runnable) == .cpu)
        // CPU time alone can make it cpu too.
        #expect(classify(cpu: Int64(290 * Self.ms), states: ["S", "S", "S", "S"]) == .cpu)
        #expect(classify(cpu: Int64(5 * Self.ms), states: ["S", "S", "D", "S"]) == .blocked)
    }
}

@Suite("SyscallTable")
struct SyscallTableTests {
    @Test("syscall numbers are named for this architecture")
    func names() {
        #if arch(x86_64)
        #expect(SyscallTable.name(230) == "clock_nanosleep")
        #expect(SyscallTable.name(35) == "nanosleep")
        #expect(SyscallTable.name(202) == "futex")
        #expect(SyscallTable.name(232) == "epoll_wait")
        #expect(SyscallTable.name(7) == "poll")
        #elseif arch(arm64)
        #expect(SyscallTable.name(115) == "clock_nanosleep")
        #expect(SyscallTable.name(98) == "futex")
        #endif
    }

    @Test("unknown syscalls get a numbered name")
    func unknownSyscall() {
        #expect(SyscallTable.name(9_999) == "syscall_9999")
    }

    @Test("signal masks from /proc are 1-based bit sets")
    func signalMaskBits() {
        typealias Masks = ThreadProcFiles.SignalMasks
        #expect(Masks.contains(0b1, 1))
        #expect(!Masks.contains(0b1, 2))
        #expect(Masks.contains(UInt64(1) << 33, 34))
        #expect(Masks.contains(UInt64(1) << 63, 64))
        #expect(!Masks.contains(.max, 0))
        #expect(!Masks.contains(.max, 65))
    }
}
