import Foundation

/// The per-process session record the monitor keeps next to its stall reports, in a file named
/// `session-<UTC time>-p<pid>.session` (JSON; not `*.json`, so it is never mistaken for a report).
///
/// The monitor rewrites it at start, after each report, on every heartbeat and at a clean stop,
/// and between those overwrites ``aliveMs`` in place. A record whose
/// ``cleanStop`` is false belongs to a process that is still running or that ended without
/// stopping the monitor (crashed or killed). `stallreport summarize` sums the records to show
/// stall rates per monitored hour.
///
/// The JSON keys are the contract (schema 1, `Reports/stall-session.schema.json`): readers ignore
/// unknown keys; a breaking change bumps ``schemaVersion``. Dates are ISO 8601 UTC.
public struct SessionRecord: Codable, Sendable, Equatable {
    /// The schema version this code reads and writes.
    public static let currentSchemaVersion = 1
    /// The value of ``kind``.
    public static let kindValue = "session"
    /// The file name extension of session records, without the dot.
    public static let fileExtension = "session"

    /// Version of the record's layout: `1`.
    public var schemaVersion: Int
    /// Always `session`.
    public var kind: String
    /// Process id of the monitored process.
    public var pid: Int
    /// Start time of the process in clock ticks since boot (`/proc/<pid>/stat` field 22); with
    /// ``pid`` and ``hostName`` it identifies the process even after its pid is reused. 0 when unknown.
    public var processStartTicks: UInt64
    /// Host name of the machine the process ran on.
    public var hostName: String
    /// Executable name of the process.
    public var executableName: String
    /// App version given by the host app, if any.
    public var appVersion: String?
    /// When monitoring started (wall clock).
    public var startedAt: Date
    /// When the record was last rewritten while the monitor ran.
    public var lastHeartbeatAt: Date
    /// How long the monitor is known to have run since ``startedAt``: overwritten in place between
    /// rewrites (often at first, then less and less), so a session that ended without a clean stop
    /// is dated within max(1 s, 10 %) of its life. Absent in records of older monitors.
    public var aliveMs: AliveMilliseconds?
    /// When the monitor was stopped cleanly; nil while running or after a crash.
    public var stoppedAt: Date?
    /// True once the monitor was stopped cleanly.
    public var cleanStop: Bool
    /// Time monitored so far (monotonic clock), in milliseconds.
    public var monitoredMs: Double
    /// The stall threshold in milliseconds.
    public var thresholdMs: Double
    /// Awake spans of the monitored loop seen so far.
    public var spans: Int
    /// Stalls detected so far (including those whose report was dropped).
    public var stalls: Int
    /// Reports written so far.
    public var reportsWritten: Int
    /// Reports not written (or written in compact form, or deleted later), per reason.
    public var reportsDropped: [String: Int]

    /// Creates a record from all of its parts.
    public init(
        schemaVersion: Int = SessionRecord.currentSchemaVersion, kind: String = SessionRecord.kindValue, pid: Int,
        processStartTicks: UInt64, hostName: String, executableName: String, appVersion: String? = nil,
        startedAt: Date, lastHeartbeatAt: Date, aliveMs: AliveMilliseconds? = nil, stoppedAt: Date? = nil,
        cleanStop: Bool, monitoredMs: Double,
        thresholdMs: Double, spans: Int, stalls: Int, reportsWritten: Int, reportsDropped: [String: Int] = [:]
    ) {
        self.schemaVersion = schemaVersion
        self.kind = kind
        self.pid = pid
        self.processStartTicks = processStartTicks
        self.hostName = hostName
        self.executableName = executableName
        self.appVersion = appVersion
        self.startedAt = startedAt
        self.lastHeartbeatAt = lastHeartbeatAt
        self.aliveMs = aliveMs
        self.stoppedAt = stoppedAt
        self.cleanStop = cleanStop
        self.monitoredMs = monitoredMs
        self.thresholdMs = thresholdMs
        self.spans = spans
        self.stalls = stalls
        self.reportsWritten = reportsWritten
        self.reportsDropped = reportsDropped
    }

    /// Monitored time to count for rates, in milliseconds: ``monitoredMs`` after a clean stop,
    /// else what is known to have been watched before the process went away or was last seen:
    /// the later of ``aliveMs`` and the time from ``startedAt`` to ``lastHeartbeatAt``. Never
    /// negative.
    public var effectiveMonitoredMs: Double {
        if cleanStop { return max(0, monitoredMs) }
        return max(0, lastHeartbeatAt.timeIntervalSince(startedAt) * 1_000, Double(aliveMs?.value ?? 0))
    }

    /// The wall-clock end of the monitored time: ``stoppedAt`` after a clean stop, else the later
    /// of ``lastHeartbeatAt`` and ``startedAt`` plus ``aliveMs``.
    public var endedAt: Date {
        if cleanStop, let stoppedAt { return stoppedAt }
        if cleanStop { return startedAt.addingTimeInterval(max(0, monitoredMs) / 1_000) }
        guard let aliveMs else { return lastHeartbeatAt }
        return max(lastHeartbeatAt, startedAt.addingTimeInterval(Double(aliveMs.value) / 1_000))
    }

    /// Whether `name` is a session record's file name (`*.session`, any case).
    public static func isSessionFileName(_ name: String) -> Bool {
        name.lowercased().hasSuffix("." + fileExtension)
    }
}
