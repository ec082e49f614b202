import Foundation

/// Which stalls take part: a time window on `startedAt` and a minimum duration.
public struct RecordFilter: Sendable, Equatable {
    /// Only stalls that started at or after this time.
    public var since: Date?
    /// Only stalls that started before this time.
    public var until: Date?
    /// Only stalls lasting at least this many milliseconds.
    public var minDurationMs: Double?

    /// Creates a filter; `nil` parts let everything through.
    public init(since: Date? = nil, until: Date? = nil, minDurationMs: Double? = nil) {
        self.since = since
        self.until = until
        self.minDurationMs = minDurationMs
    }

    /// Whether the record passes.
    package func accepts(_ record: StallRecord) -> Bool {
        if !admitsStart(record.startedAt) { return false }
        if let minDurationMs, record.durationMs < minDurationMs { return false }
        return true
    }

    /// Whether something that started at `date` lies in the time window (`since` included,
    /// `until` not).
    package func admitsStart(_ date: Date) -> Bool {
        if let since, date < since { return false }
        if let until, date >= until { return false }
        return true
    }

    /// True when nothing is filtered.
    package var isEmpty: Bool { since == nil && until == nil && minDurationMs == nil }

    /// Parses a `--since`/`--until` value: an ISO 8601 date-time (`2026-03-01T12:00:00Z`, with or
    /// without fractional seconds) or a calendar date (`2026-03-01`, meaning its start in UTC).
    package static func parseDate(_ text: String) -> Date? {
        if let date = ReportCoding.parseDate(text) { return date }
        let style = Date.ISO8601FormatStyle().year().month().day()
        return try? style.parse(text)
    }
}
