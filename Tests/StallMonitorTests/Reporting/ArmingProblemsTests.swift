import Foundation
import Glibc
import StallReportKit
import Testing

@testable import StallMonitor

/// A thread whose arming partly fails is still watched; what failed is said once through the
/// error reporter and written into every report of that thread.
@Suite("Arming a thread: failed steps are counted and reported")
struct ArmingProblemsTests {
    static let ms = ThreadWatchHarness.ms

    @Test("a failed alternate stack and a timed-out warm-up sample are reported and end up in the report's loop facts")
    func failedStepsReachTheReport() throws {
        var steps = MonitoredThread.ArmingSteps()
        steps.ensureAltstack = { _ in -ENOMEM }
        steps.warmUp = { _, _, _, _ in .timedOut }
        let harness = ThreadWatchHarness(arming: steps)
        let reported = harness.armingReports
        #expect(reported.count == 2, "\(reported)")
        #expect(
            reported.contains {
                $0.contains("no alternate signal stack") && $0.contains(String(cString: strerror(ENOMEM)))
            }, "\(reported)")
        #expect(reported.contains { $0.contains("warm-up sample timed out") }, "\(reported)")

        // The thread is watched anyway: a stall is tracked and its report says what failed.
        harness.tracker.loopWoke(at: 1_000 * Self.ms)
        _ = harness.watch.step(now: 1_130 * Self.ms)
        harness.tracker.loopWillWait(at: 1_400 * Self.ms)
        _ = harness.watch.step(now: 1_401 * Self.ms)
        let stall = try #require(harness.endedStalls.first, "\(harness.emitted)")
        let report = ReportBuilder(
            symbolicator: MonitorProcess.shared.symbolicator, process: HostFacts.process(appVersion: nil), tags: [:],
            symbolicateInProcess: false
        )
        .build(stall, naming: .none).report
        let problems = try #require(report.loop.armingProblems)
        #expect(problems.count == 2)
        #expect(
            problems.allSatisfy { message in reported.contains { $0.hasSuffix(message) } }, "\(problems) vs \(reported)"
        )
        let decoded = try StallReport.decode(from: report.encoded())
        #expect(decoded.loop.armingProblems == problems)
    }

    @Test("a thread that armed without trouble has no armingProblems in its reports")
    func cleanArming() throws {
        var steps = MonitoredThread.ArmingSteps()
        steps.warmUp = { _, _, _, _ in .stack([1, 2, 3], truncated: false) }
        let harness = ThreadWatchHarness(arming: steps)
        #expect(harness.armingReports.isEmpty)
        harness.tracker.loopWoke(at: 1_000 * Self.ms)
        _ = harness.watch.step(now: 1_130 * Self.ms)
        harness.tracker.loopWillWait(at: 1_400 * Self.ms)
        _ = harness.watch.step(now: 1_401 * Self.ms)
        let stall = try #require(harness.endedStalls.first)
        let report = ReportBuilder(
            symbolicator: MonitorProcess.shared.symbolicator, process: HostFacts.process(appVersion: nil), tags: [:],
            symbolicateInProcess: false
        )
        .build(stall, naming: .none).report
        #expect(report.loop.armingProblems == nil)
    }
}
