import Foundation

/// Session records summed up: how long the monitor watched, how many processes it watched, how
/// they ended, and what the monitor could not write. Rates (stalls per monitored hour) are
/// computed from ``monitoredMs``.
///
/// With a time window (`--since`/`--until`), a session counts when its monitored time overlaps the
/// window, and only the overlapping share of its monitored time is added; its counts
/// (stalls recorded, reports dropped …) are added whole.
public struct SessionTotals: Sendable, Equatable {
    /// Session records counted.
    public var sessions = 0
    /// Sessions stopped cleanly.
    public var cleanlyStopped = 0
    /// Sessions without a clean stop whose process still runs on this machine.
    public var running = 0
    /// Sessions that ended without a clean stop: the process crashed or was killed.
    public var endedUncleanly = 0
    /// Monitored time, in milliseconds (see `SessionRecord/effectiveMonitoredMs`).
    public var monitoredMs = 0.0
    /// Awake spans the monitors saw.
    package var spans = 0
    /// Stalls the monitors detected (including those whose report was dropped).
    package var stallsRecorded = 0
    /// Reports the monitors wrote.
    package var reportsWritten = 0
    /// Reports dropped, per reason.
    package var reportsDropped: [String: Int] = [:]
    /// Session records outside the time window.
    package var filteredOut = 0
    /// Earliest start of a counted session.
    package var firstStartedAt: Date?
    /// Latest end (clean stop or last heartbeat) of a counted session.
    package var lastEndedAt: Date?
    /// Files of the sessions that ended uncleanly, sorted.
    public var uncleanPaths: [String] = []

    /// Creates empty totals.
    package init() {}

    /// Monitored time in hours.
    package var monitoredHours: Double { monitoredMs / 3_600_000 }

    /// Total of ``reportsDropped``.
    package var reportsDroppedTotal: Int { reportsDropped.values.reduce(0, +) }

    /// `count` per monitored hour; nil when nothing was monitored.
    package func perHour(_ count: Double) -> Double? {
        monitoredMs > 0 ? count / monitoredHours : nil
    }

    /// Folds in one record read from `path`. `isRunning` tells whether a record without a clean
    /// stop belongs to a process that still runs (see ``SessionRecord/processIsRunning()``).
    package mutating func add(
        _ record: SessionRecord, path: String, since: Date? = nil, until: Date? = nil,
        isRunning: (SessionRecord) -> Bool = { $0.processIsRunning() }
    ) {
        guard let share = Self.share(of: record, since: since, until: until) else {
            filteredOut += 1
            return
        }
        sessions += 1
        if record.cleanStop {
            cleanlyStopped += 1
        } else if isRunning(record) {
            running += 1
        } else {
            endedUncleanly += 1
            uncleanPaths.append(path)
        }
        monitoredMs += record.effectiveMonitoredMs * share
        spans += record.spans
        stallsRecorded += record.stalls
        reportsWritten += record.reportsWritten
        reportsDropped.merge(record.reportsDropped, uniquingKeysWith: +)
        firstStartedAt = min(firstStartedAt ?? record.startedAt, record.startedAt)
        lastEndedAt = max(lastEndedAt ?? record.endedAt, record.endedAt)
    }

    /// Adds another set of totals (e.g. one worker's share).
    package mutating func merge(_ other: SessionTotals) {
        sessions += other.sessions
        cleanlyStopped += other.cleanlyStopped
        running += other.running
        endedUncleanly += other.endedUncleanly
        monitoredMs += other.monitoredMs
        spans += other.spans
        stallsRecorded += other.stallsRecorded
        reportsWritten += other.reportsWritten
        reportsDropped.merge(other.reportsDropped, uniquingKeysWith: +)
        filteredOut += other.filteredOut
        if let first = other.firstStartedAt { firstStartedAt = min(firstStartedAt ?? first, first) }
        if let last = other.lastEndedAt { lastEndedAt = max(lastEndedAt ?? last, last) }
        uncleanPaths = (uncleanPaths + other.uncleanPaths).sorted()
    }

    /// The share (0…1] of a session's monitored time inside `[since, until)`; nil when the
    /// session lies outside the window. 1 without a window.
    static func share(of record: SessionRecord, since: Date?, until: Date?) -> Double? {
        guard since != nil || until != nil else { return 1 }
        let start = record.startedAt
        let end = max(record.endedAt, start)
        let lower = max(start, since ?? start)
        let upper = min(end, until ?? end)
        let length = end.timeIntervalSince(start)
        if length <= 0 {
            // An instant: inside when it falls in the window.
            if let since, start < since { return nil }
            if let until, start >= until { return nil }
            return 1
        }
        let overlap = upper.timeIntervalSince(lower)
        return overlap > 0 ? min(1, overlap / length) : nil
    }
}
