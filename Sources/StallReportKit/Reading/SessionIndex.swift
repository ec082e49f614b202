import Foundation

/// Which processes have a session record, so that stalls of processes without one (written by an
/// older monitor, or whose session file was lost or broken) can be counted apart: a stall rate
/// divides stalls by monitored time, and time nobody recorded cannot be in the denominator.
package struct SessionIndex: Sendable, Equatable {
    private struct ProcessKey: Hashable, Sendable {
        var hostName: String
        var pid: Int
    }

    /// Earliest session start per process (host name and pid).
    private var earliestStart: [ProcessKey: Date] = [:]

    /// Creates an index of `records`.
    package init(_ records: some Sequence<SessionRecord>) {
        for record in records {
            let key = ProcessKey(hostName: record.hostName, pid: record.pid)
            earliestStart[key] = min(earliestStart[key] ?? record.startedAt, record.startedAt)
        }
    }

    /// True when there is no session at all.
    package var isEmpty: Bool { earliestStart.isEmpty }

    /// Slack for clocks: a stall may be stamped slightly before its session's start.
    package static let clockSlack: TimeInterval = 1

    /// Whether a stall comes from a process with a session record: same host and pid, starting no
    /// earlier than that process's first session (less ``clockSlack``).
    package func covers(_ record: StallRecord) -> Bool {
        guard let hostName = record.hostName, let pid = record.pid,
            let start = earliestStart[ProcessKey(hostName: hostName, pid: pid)]
        else { return false }
        return record.startedAt >= start.addingTimeInterval(-Self.clockSlack)
    }
}
