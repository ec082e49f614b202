import Dispatch
import Foundation
import Glibc
import Synchronization
import Testing

@testable import StallMonitor

/// The blocking-call collector's thread sleeps while no call is recorded (it polled every 50 ms:
/// 20 wake-ups a second in every idle process with detection on, and, unnamed, they were counted
/// as the host's own), and a record wakes it at once.
@Suite("Blocking-call collector wake-ups", .serialized)
struct BlockingCollectorWakeupTests {
    /// The process's threads named `name`, with their voluntary context switches.
    static func threads(named name: String) -> [(tid: Int32, switches: Int)] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { entry -> (Int32, Int)? in
            guard let tid = Int32(entry),
                let comm = try? String(contentsOfFile: "/proc/self/task/\(entry)/comm", encoding: .utf8),
                comm.trimmingCharacters(in: .newlines) == name,
                let status = try? String(contentsOfFile: "/proc/self/task/\(entry)/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("voluntary_ctxt_switches:") }),
                let switches = Int(line.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "")
            else { return nil }
            return (tid, switches)
        }
    }

    /// The collector's thread, once it has started (nil if it never does within 2 s).
    static func collectorThread() async throws -> (tid: Int32, switches: Int)? {
        for _ in 0..<200 {
            if let thread = threads(named: "stall-blocking").first { return thread }
            try await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    @Test(
        "an idle detector's collector is a thread named stall-blocking that does not wake; a recorded call wakes it and tells the detector without a take",
        .enabled(if: BlockingVisibility.detectorStarts && BlockingVisibility.executableCallsSeen)
    )
    func sleepsUntilACallIsRecorded() async throws {
        let told = Atomic<Int>(0)
        // Scoped, so that no call of other code in the process is recorded (and wakes it).
        let detector = try BlockingCallDetector.start(.init(threshold: .milliseconds(2)), scoped: true) {
            told.add(1, ordering: .sequentiallyConsistent)
        }
        defer { detector.stop() }
        let collector = try #require(try await Self.collectorThread(), "no thread named stall-blocking")
        try await Task.sleep(for: .milliseconds(200))  // its first pass
        let before = try #require(Self.threads(named: "stall-blocking").first { $0.tid == collector.tid })
        try await Task.sleep(for: .seconds(1))
        let after = try #require(Self.threads(named: "stall-blocking").first { $0.tid == collector.tid })
        #expect(
            after.switches - before.switches <= 1,
            "the idle collector woke \(after.switches - before.switches) times in 1 s")
        #expect(told.load(ordering: .sequentiallyConsistent) == 0)

        // A call in the detector's scope on a thread marked must-not-block, never taken by the
        // test: the collector's thread takes it and tells the detector.
        let thread = Thread {
            BlockingCallDetector.markMustNotBlock(true)
            detector.attributing { BlockingWork.sleepInUsleepForBlockingTest(milliseconds: 5) }
            BlockingCallDetector.markMustNotBlock(false)
        }
        thread.start()
        var waited = 0
        while told.load(ordering: .sequentiallyConsistent) == 0 && waited < 300 {
            try await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        #expect(told.load(ordering: .sequentiallyConsistent) >= 1, "the detector was not told of the call within 3 s")
        let calls = detector.takeCalls()
        #expect(
            calls.contains {
                $0.call == "usleep"
                    && $0.frames.contains { $0.function?.contains("sleepInUsleepForBlockingTest") == true }
            },
            "\(calls.map(\.call))")
    }

    @Test("a stopped detector's collector thread ends at once, not at its next timed wake-up")
    func endsWhenTheLastDetectorStops() async throws {
        guard BlockingVisibility.detectorStarts else { return }
        let detector = try BlockingCallDetector.startScoped(.init(threshold: .milliseconds(2)))
        let collector = try #require(try await Self.collectorThread(), "no thread named stall-blocking")
        detector.stop()
        var waited = 0
        while Self.threads(named: "stall-blocking").contains(where: { $0.tid == collector.tid }) && waited < 200 {
            try await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        #expect(
            !Self.threads(named: "stall-blocking").contains { $0.tid == collector.tid },
            "the collector still runs 2 s after the last detector stopped")
    }
}

/// A repeating timer's gated jobs run only while their gate is open, and opening one wakes a
/// timer that sleeps past it.
@Suite("Repeating timer gates")
struct RepeatingTimerGateTests {
    @Test("a closed gate's job never runs; opened, it runs one period later and on; closed again, it stops")
    func gatedJob() async throws {
        let runs = Atomic<Int>(0)
        let gate = RepeatingTimer.Gate(open: false)
        let timer = RepeatingTimer(
            enqueue: { $0() },
            jobs: [.queued(.every(.milliseconds(20)), gate: gate) { runs.add(1, ordering: .sequentiallyConsistent) }])
        defer { timer.cancel() }
        try await Task.sleep(for: .milliseconds(200))
        #expect(runs.load(ordering: .sequentiallyConsistent) == 0, "a closed gate's job ran")
        gate.open()
        var waited = 0
        while runs.load(ordering: .sequentiallyConsistent) < 3 && waited < 300 {
            try await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        #expect(runs.load(ordering: .sequentiallyConsistent) >= 3, "the opened gate's job did not run on")
        gate.close()
        try await Task.sleep(for: .milliseconds(100))  // a run already due may still come
        let settled = runs.load(ordering: .sequentiallyConsistent)
        try await Task.sleep(for: .milliseconds(200))
        #expect(runs.load(ordering: .sequentiallyConsistent) == settled, "a closed gate's job kept running")
    }
}
