import Foundation
import StallReportKit
import StallReportKitTestSupport
import Testing

/// Schema-valid but extreme numbers (and numbers out of any range) in every numeric field of a
/// report and of a session record, through every subcommand and format: nothing crashes; a value
/// out of range is refused as bad input naming its file or shown saturated; the rest is processed.
@Suite("stallreport: extreme numbers never crash")
struct StallReportCLIExtremeNumberTests {
    /// Numeric fields of a report, as key paths into its JSON.
    static let reportFields = [
        "durationMs", "thresholdMs", "mainThreadCPUMs", "cpuObservedMs", "loop.longestPassMs", "loop.passes",
        "loop.threadID",
        "process.pid", "sampling.intervalMs", "sampling.effectiveIntervalMs", "sampling.attempted", "sampling.taken",
        "sampling.maxSamples", "sampling.timedOut", "sampling.dropped", "samples.*.offsetMs", "frames.0.line",
        "frames.1.offset",
        "processStoppedMs", "machineSuspendedMs", "omittedSamples",
    ]

    /// Numeric fields of a session record.
    static let sessionFields = ["monitoredMs", "thresholdMs", "spans", "stalls", "reportsWritten", "processStartTicks"]

    /// Extreme values as JSON number text: huge, tiny, negative, past Int64, past Double (infinite).
    static let values = [
        "1e22", "1e21", "1e308", "-1e308", "-1", "1e-300", "0", "9223372036854775807", "18446744073709551616", "1e400",
    ]

    @Test(
        "No subcommand or format crashes on an extreme number in any field; the other reports are still read"
    )
    func extreme() throws {
        // Every literal in every field, each in a file (and a stall function, a fingerprint, a
        // session pid) of its own, in one directory: each command runs once over them all, not
        // once per literal (one process per command and literal took 121 s under ASan). A file
        // refused for one value leaves the others read; the names say which literal it holds.
        let directory = try ReportDirectory()
        let reports = try directory.subdirectory("reports")
        let scratch = try directory.subdirectory("out")
        try EveryCommand.prepare(scratch: scratch)
        let good = DemoScenario.report(DemoScenario.spinSymbols, 300, minute: 0)
        var files = [try ReportFixtures.write(good, to: reports, name: "good.json").path]
        for (index, literal) in Self.values.enumerated() {
            for (number, field) in Self.reportFields.enumerated() {
                var report = DemoScenario.report(
                    ["StallDemo.field\(number)value\(index)()"], 400, minute: Double(number + 1))
                report.processStoppedMs = 1
                report.machineSuspendedMs = 1
                report.omittedSamples = 1
                let data = try ReportJSONPatch.patch(try report.encoded(), keyPath: field, literal: literal)
                let name = "extreme-\(field.replacingOccurrences(of: "*", with: "all"))-value\(index).json"
                files.append(try directory.file("reports/\(name)", data).path)
            }
            for field in Self.sessionFields {
                let text = SessionCLIFixtures.sessionText(pid: 4242 + index, minutes: 60, stalls: 1)
                let data = try ReportJSONPatch.patch(Data(text.utf8), keyPath: field, literal: literal)
                try directory.file("reports/session-\(field)-value\(index)-p\(4242 + index).session", data)
            }
        }
        let literals = Self.values.enumerated().map { "value\($0.offset) = \($0.element)" }.joined(separator: ", ")

        for invocation in EveryCommand.invocations(directory: reports.path, files: files, scratch: scratch) {
            let run = try StallReportCLI.run(invocation.arguments, environment: invocation.environment)
            #expect([0, 1, 2].contains(run.status), "\(invocation) (\(literals)): \(run)")
            #expect(!run.stderr.contains("Fatal error"), "\(invocation) (\(literals)): \(run)")
            #expect(!run.stdout.contains("-1170101590"), "\(invocation)")
            if invocation.name == "summarize json", run.status == 0 {
                let json = try run.jsonObject()
                let totals = json?["totals"] as? [String: Any]
                #expect(
                    (totals?["reportsRead"] as? Int ?? 0) >= 1, "\(invocation): \(run.stdout.prefix(400))")
            }
            // Whatever is refused is named: each problem line names a file under the reports directory.
            for line in run.stderrLines
            where !line.hasPrefix("stallreport: error:") && !line.hasPrefix("stallreport: warning:")
                && !line.contains("no stall matched")
            {
                #expect(line.contains(reports.path), "\(invocation) (\(literals)): \(line)")
            }
        }
    }
}
