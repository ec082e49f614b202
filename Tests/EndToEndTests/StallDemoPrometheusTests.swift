import Foundation
import StallReportKit
import Testing

/// `stall-demo --prometheus`: the monitor's swift-metrics through swift-prometheus, bootstrapped
/// globally in a real host process, read back as Prometheus exposition text.
@Suite("stall-demo --prometheus", .serialized)
struct StallDemoPrometheusTests {
    @Test("a real stall shows in the exposition text: its count, its duration histogram, the loop's time")
    func exposition() throws {
        try withScratchFolder("stall-demo-prometheus") { directory in
            let output = directory.appendingPathComponent("reports")
            let metricsFile = directory.appendingPathComponent("metrics.prom")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let run = try StallReportCLI.run(
                ["--output", output.path, "--only", "cpu-spin-300", "--prometheus", metricsFile.path],
                timeout: 120, executable: "stall-demo")
            try #require(run.status == 0, "\(run)")
            let reports = try FileManager.default.contentsOfDirectory(atPath: output.path).filter {
                $0.hasPrefix("stall-") && $0.hasSuffix(".json")
            }
            try #require(reports.count == 1, "\(reports)")
            let report = try StallReport.read(from: output.appendingPathComponent(reports[0]))
            let text = try String(contentsOf: metricsFile, encoding: .utf8)
            let lines = Set(text.split(separator: "\n").map(String.init))

            let loop = #"loop_kind="runLoop",loop_name="main""#
            let stall = "\(loop),classification=\"\(report.classification.rawValue)\""
            #expect(lines.contains("# TYPE stallmonitor_stall_duration histogram"), "\(text)")
            #expect(lines.contains("stallmonitor_stalls{\(stall)} 1"), "\(text)")
            #expect(lines.contains("stallmonitor_stall_duration_count{\(stall)} 1"), "\(text)")
            // The sum is the report's duration, in seconds.
            let sumLine = try #require(
                lines.first { $0.hasPrefix("stallmonitor_stall_duration_sum{\(stall)} ") }, "\(text)")
            let sum = try #require(Double(sumLine.split(separator: " ").last ?? ""))
            #expect(abs(sum * 1000 - report.durationMs) < 1, "\(sum) s, report \(report.durationMs) ms")
            #expect(lines.contains("stallmonitor_stall_duration_bucket{\(stall),le=\"0.25\"} 0"), "\(text)")
            #expect(lines.contains("stallmonitor_stall_duration_bucket{\(stall),le=\"+Inf\"} 1"), "\(text)")
            #expect(lines.contains("stallmonitor_reports_dropped{reason=\"rateLimitedToSummary\"} 0"), "\(text)")
            // The loop was awake at least for the 300 ms stall.
            let active = try #require(
                lines.first { $0.hasPrefix("stallmonitor_loop_time{\(loop),loop_state=\"active\"} ") }, "\(text)")
            #expect((Double(active.split(separator: " ").last ?? "") ?? 0) >= 0.3, "\(active)")
            let utilisation = try #require(
                lines.first { $0.hasPrefix("stallmonitor_loop_utilization{\(loop)} ") }, "\(text)")
            #expect((0...1).contains(Double(utilisation.split(separator: " ").last ?? "") ?? -1), "\(utilisation)")
            // Never a fingerprint or a thread id as a label value.
            #expect(!text.contains("=\"\(report.fingerprint)\"") && !text.contains("=\"\(report.loop.threadID)\""))
        }
    }
}
