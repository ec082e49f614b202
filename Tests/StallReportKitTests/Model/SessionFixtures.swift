import Foundation
import StallReportKit
import StallReportKitTestSupport

/// Session records and reports with known numbers, for the session and scene tests.
enum SessionFixtures {
    /// 2026-03-01T12:00:00Z.
    static let start = Date(timeIntervalSince1970: 1_772_366_400)

    /// A session record of `minutes` monitored minutes starting `offsetMinutes` after ``start``:
    /// cleanly stopped (monitoredMs exact), or not (then only the heartbeat times tell its length).
    static func session(
        pid: Int, minutes: Double, offsetMinutes: Double = 0, clean: Bool = true, stalls: Int = 0,
        dropped: [String: Int] = [:], host: String = "ci-runner", ticks: UInt64 = 123_456
    ) -> SessionRecord {
        let begin = start.addingTimeInterval(offsetMinutes * 60)
        let end = begin.addingTimeInterval(minutes * 60)
        return SessionRecord(
            pid: pid, processStartTicks: ticks, hostName: host, executableName: "App", appVersion: "1.4.2",
            startedAt: begin, lastHeartbeatAt: end, stoppedAt: clean ? end : nil, cleanStop: clean,
            // An unclean record's monitoredMs lags behind its heartbeat: it must not be used.
            monitoredMs: clean ? minutes * 60_000 : 1_000, thresholdMs: 250, spans: 1_000, stalls: stalls,
            reportsWritten: stalls, reportsDropped: dropped)
    }

    /// A record of process `pid` on `ci-runner` starting `minute` minutes after ``start``.
    static func record(
        _ fingerprint: String, _ durationMs: Double, minute: Double, pid: Int = 4242, scene: String? = nil,
        status: StallStatus = .ended, rateLimited: Bool = false
    ) -> StallRecord {
        StallRecord(
            fingerprint: fingerprint, durationMs: durationMs, startedAt: start.addingTimeInterval(minute * 60),
            status: status, classification: .cpu,
            path: "/reports/\(fingerprint)-\(Int(durationMs))-\(Int(minute)).json",
            stack: [
                StackFrameSummary(symbol: "App.\(fingerprint)()", file: ReportFixtures.appFile, line: 10, inApp: true)
            ],
            syscall: nil, scene: scene, rateLimited: rateLimited, hostName: "ci-runner", pid: pid)
    }

    /// A collection of `records` and `sessions` (read from made-up paths), as the collector builds it.
    static func collection(
        _ records: [StallRecord], sessions: [SessionRecord], grouping: SummaryGrouping = .fingerprint,
        filter: RecordFilter = RecordFilter()
    ) -> ReportCollection {
        var collection = ReportCollection(grouping: grouping)
        for (index, session) in sessions.enumerated() {
            collection.sessions.add(
                session, path: "/reports/session-\(index).session", since: filter.since, until: filter.until,
                isRunning: { _ in false })
        }
        collection.sessionFilesFound = sessions.count
        let index = SessionIndex(sessions)
        for record in records { collection.add(record, filter: filter, sessionIndex: index) }
        return collection
    }

    /// Six stalls (300, 400, 500, 600, 700, 1500 ms = 4 s; the 1500 ms one fatal) of two processes.
    static let sixStalls = [
        record("spin", 300, minute: 1), record("spin", 400, minute: 2), record("spin", 500, minute: 3),
        record("lock", 600, minute: 31, pid: 4243), record("lock", 700, minute: 32, pid: 4243),
        record("lock", 1_500, minute: 33, pid: 4243, status: .fatal),
    ]

    /// Writes `data` as `name` in `directory`.
    @discardableResult
    static func write(_ data: Data, to directory: URL, name: String) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try data.write(to: url)
        return url
    }
}
