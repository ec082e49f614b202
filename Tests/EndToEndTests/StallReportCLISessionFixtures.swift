import Foundation
import StallReportKit

/// Hand-made session records (JSON text as the monitor writes it, not built with StallReportKit's
/// encoder, so the tests pin the file contract) and reports tied to them by host name and pid.
enum SessionCLIFixtures {
    /// 2026-03-01T12:00:00Z, the start of ``DemoScenario``.
    static let start = DemoScenario.start

    static func stamp(_ date: Date) -> String { ReportCoding.formatDate(date) }

    /// The text of a session record: `minutes` long from `offsetMinutes` after ``start``. A clean
    /// record has `monitoredMs` and `stoppedAt`; an unclean one has a stale `monitoredMs` (which
    /// readers must not use) and no `stoppedAt`.
    static func sessionText(
        pid: Int, minutes: Double, offsetMinutes: Double = 0, clean: Bool = true, stalls: Int = 0,
        dropped: [String: Int] = [:], host: String = "ci-runner"
    ) -> String {
        let begin = start.addingTimeInterval(offsetMinutes * 60)
        let end = begin.addingTimeInterval(minutes * 60)
        let droppedText = dropped.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }.joined(
            separator: ", ")
        return """
            {
              "appVersion": "1.4.2",
              "cleanStop": \(clean),
              "executableName": "App",
              "hostName": "\(host)",
              "kind": "session",
              "lastHeartbeatAt": "\(stamp(end))",
              "monitoredMs": \(clean ? minutes * 60_000 : 1_000),
              "pid": \(pid),
              "processStartTicks": 777,
              "reportsDropped": {\(droppedText)},
              "reportsWritten": \(stalls),
              "schemaVersion": 1,
              "spans": 5000,
              "stalls": \(stalls),
              "startedAt": "\(stamp(begin))",
              \(clean ? "\"stoppedAt\": \"\(stamp(end))\"," : "")
              "thresholdMs": 250
            }
            """
    }

    /// Writes a session record named as the monitor names it.
    @discardableResult
    static func writeSession(_ text: String, pid: Int, offsetMinutes: Double = 0, to directory: URL) throws -> URL {
        let stamp = stamp(start.addingTimeInterval(offsetMinutes * 60)).replacingOccurrences(of: "-", with: "")
            .replacingOccurrences(of: ":", with: "")
        let url = directory.appendingPathComponent("session-\(stamp)-p\(pid).session")
        try Data(text.utf8).write(to: url)
        return url
    }

    /// A report of process `pid` on `ci-runner`, with an optional scene.
    static func report(
        _ symbols: [String], _ ms: Double, minute: Double, pid: Int = 4242, scene: String? = nil,
        status: StallStatus = .ended
    ) -> StallReport {
        var report = DemoScenario.report(symbols, ms, minute: minute, status: status)
        report.process.pid = pid
        report.scene = scene
        return report
    }

    /// The compact form the monitor writes for a rate-limited fingerprint: no samples, only the
    /// representative stack's frames and images.
    static func compact(_ report: StallReport) -> StallReport {
        var compact = report
        compact.rateLimited = true
        compact.omittedSamples = report.samples.count
        compact.samples = []
        return compact
    }
}
