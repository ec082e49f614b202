import Foundation
import Glibc
import StallReportKit
import Testing

@testable import StallMonitor

/// Time the machine spends suspended is not a stall: spans are measured on CLOCK_MONOTONIC, and a
/// rise of CLOCK_BOOTTIME − CLOCK_MONOTONIC during a tracked stall is reported, not counted. A
/// real suspend cannot be made here, so the watch's suspend clock is replaced to simulate one.
@Suite("Machine suspend", .serialized)
struct MachineSuspendTests {
    private static let ms = ThreadWatchHarness.ms
    private static let hour = 3_600_000 * ThreadWatchHarness.ms

    /// A suspend clock the test moves by hand.
    private final class SimulatedSuspend: @unchecked Sendable {
        var nanos: UInt64 = 5 * MachineSuspendTests.ms
    }

    /// A watch whose suspend clock is a ``SimulatedSuspend``.
    private static func harnessWithSimulatedSuspend() -> (ThreadWatchHarness, SimulatedSuspend) {
        let suspend = SimulatedSuspend()
        let harness = ThreadWatchHarness(environment: .init(machineSuspendedNanos: { suspend.nanos }))
        return (harness, suspend)
    }

    @Test("the real clocks: BOOTTIME − MONOTONIC is what SuspendClock reads, and it never goes back")
    func realClock() {
        var boot = timespec()
        var monotonic = timespec()
        clock_gettime(CLOCK_BOOTTIME, &boot)
        let first = SuspendClock.suspendedNanos()
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        let expected =
            (Int64(boot.tv_sec) - Int64(monotonic.tv_sec)) * 1_000_000_000 + Int64(boot.tv_nsec)
            - Int64(monotonic.tv_nsec)
        #expect(abs(Int64(first) - max(expected, 0)) < 5 * Int64(Self.ms), "\(first) vs \(expected)")
        #expect(SuspendClock.suspendedNanos() + 1_000_000 >= first)
        #expect(spanClockIsMonotonic(), "spans are timed on CLOCK_MONOTONIC")
    }

    @Test("a 100 ms span with a 1 h suspend in the middle is no stall")
    func suspendInShortSpan() {
        let (harness, suspend) = Self.harnessWithSimulatedSuspend()
        harness.tracker.loopWoke(at: 1_000 * Self.ms)  // afterWaiting: the span opens
        _ = harness.watch.step(now: 1_050 * Self.ms)
        suspend.nanos += Self.hour  // the machine sleeps for an hour
        harness.tracker.loopWillWait(at: 1_100 * Self.ms)  // beforeWaiting, 100 ms of monotonic time later
        _ = harness.watch.step(now: 1_101 * Self.ms)
        _ = harness.watch.step(now: 1_102 * Self.ms)
        #expect(harness.endedStalls.isEmpty)
    }

    @Test("a 400 ms stall that spans a 1 h suspend lasts 400 ms, and its report says the machine slept 1 h")
    func suspendInStall() throws {
        let (harness, suspend) = Self.harnessWithSimulatedSuspend()
        harness.tracker.loopWoke(at: 1_000 * Self.ms)
        _ = harness.watch.step(now: 1_130 * Self.ms)  // past the lead: tracking begins
        suspend.nanos += Self.hour
        _ = harness.watch.step(now: 1_300 * Self.ms)  // past the threshold: inProgress
        harness.tracker.loopWillWait(at: 1_400 * Self.ms)
        _ = harness.watch.step(now: 1_401 * Self.ms)
        let stalls = harness.endedStalls
        try #require(stalls.count == 1, "\(harness.emitted)")
        let stall = stalls[0]
        #expect(stall.end - stall.spanStart == 400 * Self.ms)
        #expect(stall.machineSuspendedNanos == Self.hour)
        let inProgress = harness.emitted.compactMap {
            if case .inProgress(let recording) = $0 { recording } else { nil }
        }
        #expect(inProgress.first?.machineSuspendedNanos == Self.hour)

        let builder = ReportBuilder(
            symbolicator: MonitorProcess.shared.symbolicator, process: HostFacts.process(appVersion: nil), tags: [:],
            symbolicateInProcess: false)
        let report = builder.build(stall, naming: .none).report
        #expect(report.durationMs == 400)
        #expect(report.machineSuspendedMs == 3_600_000)
        let decoded = try StallReport.decode(from: report.encoded())
        #expect(decoded.machineSuspendedMs == 3_600_000)
    }

    @Test("a stall without a suspend has no machineSuspendedMs")
    func noSuspend() throws {
        let (harness, _) = Self.harnessWithSimulatedSuspend()
        harness.tracker.loopWoke(at: 1_000 * Self.ms)
        _ = harness.watch.step(now: 1_130 * Self.ms)
        harness.tracker.loopWillWait(at: 1_400 * Self.ms)
        _ = harness.watch.step(now: 1_401 * Self.ms)
        let stall = try #require(harness.endedStalls.first)
        #expect(stall.machineSuspendedNanos == 0)
        let report = ReportBuilder(
            symbolicator: MonitorProcess.shared.symbolicator, process: HostFacts.process(appVersion: nil), tags: [:],
            symbolicateInProcess: false
        )
        .build(stall, naming: .none).report
        #expect(report.machineSuspendedMs == nil)
    }
}

/// Whether the monitor's span clock reads CLOCK_MONOTONIC (not BOOTTIME or REALTIME).
private func spanClockIsMonotonic() -> Bool {
    var before = timespec()
    var after = timespec()
    clock_gettime(CLOCK_MONOTONIC, &before)
    let span = Kernel.monotonicNanoseconds()
    clock_gettime(CLOCK_MONOTONIC, &after)
    let low = UInt64(before.tv_sec) * 1_000_000_000 + UInt64(before.tv_nsec)
    let high = UInt64(after.tv_sec) * 1_000_000_000 + UInt64(after.tv_nsec)
    return span >= low && span <= high
}
