import Foundation
import StallReportKit
import StallReportKitTestSupport

/// Reports for the profile, export and flame graph tests: the shared `ReportFixtures` report with a
/// mix of sample kinds (stack, syscall, none) and a known effective interval.
enum ProfileFixtures {
    /// A report with `stack` full samples, `syscall` syscall samples (one frame) and `none`
    /// samples without a stack, each weighing `intervalMs`.
    static func report(
        _ symbols: [String], stack: Int, syscall: Int = 0, none: Int = 0, intervalMs: Double = 12.5,
        startedAt: Date = Date(timeIntervalSince1970: 1_772_366_400), pid: Int = 4242, tid: Int = 4243
    ) -> StallReport {
        var report = ReportFixtures.report(appSymbols: symbols, durationMs: 1_000, startedAt: startedAt)
        let full = report.representativeStack
        var samples: [StallReport.Sample] = []
        for index in 0..<stack {
            samples.append(.init(offsetMs: Double(index) * intervalMs, kind: .stack, threadState: "R", frames: full))
        }
        for index in 0..<syscall {
            samples.append(
                .init(
                    offsetMs: Double(stack + index) * intervalMs, kind: .syscall, threadState: "S",
                    syscall: "nanosleep",
                    note: "not interrupted", frames: [full[0]]))
        }
        for index in 0..<none {
            samples.append(
                .init(
                    offsetMs: Double(stack + syscall + index) * intervalMs, kind: .none, threadState: "R",
                    note: "signal blocked", frames: []))
        }
        report.samples = samples
        report.sampling.intervalMs = 10
        report.sampling.effectiveIntervalMs = intervalMs
        report.process.pid = pid
        report.loop.threadID = tid
        return report
    }

    /// Two stalls: `App.spin()` (8 stack samples of 12.5 ms + 2 without stack) and
    /// `App.wait()` (4 stack + 3 syscall samples of 10 ms), one minute apart.
    static let profiles: [StallProfile] = [
        StallProfile(report: report(["App.spin()", "App.tick()"], stack: 8, none: 2), path: "/r/spin.json"),
        StallProfile(
            report: report(
                ["App.wait()", "App.tick()"], stack: 4, syscall: 3, intervalMs: 10,
                startedAt: Date(timeIntervalSince1970: 1_772_366_460)), path: "/r/wait.json"),
    ]

    /// 10 × 12.5 + 7 × 10 milliseconds.
    static let sampledMs = 195.0
}
