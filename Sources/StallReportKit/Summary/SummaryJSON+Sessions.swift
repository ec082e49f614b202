import Foundation

extension SummaryJSON {
    /// Session records summed up and the stall rates they give (`sessions` in the summary JSON).
    /// Rates count the stalls summarized (after `--min-duration` and the time window) over the
    /// monitored time.
    package struct SessionsJSON: Codable, Sendable, Equatable {
        /// Session records counted (one per monitored process).
        package var sessions: Int
        /// Sessions stopped cleanly.
        package var cleanlyStopped: Int
        /// Sessions that ended without a clean stop: crashed or killed.
        package var endedUncleanly: Int
        /// Sessions without a clean stop whose process still runs on this machine.
        package var running: Int
        /// Session records outside `--since`/`--until`.
        package var filteredOut: Int
        /// Monitored time: `monitoredMs` of cleanly stopped sessions, `effectiveMonitoredMs`
        /// of the others (clipped to the time window).
        package var monitoredMs: Double
        /// ``monitoredMs`` in hours.
        package var monitoredHours: Double
        /// Stalls summarized per monitored hour; absent without monitored time.
        package var stallsPerHour: Double?
        /// Stall time summarized per monitored hour, in milliseconds; absent without monitored time.
        package var stallMsPerHour: Double?
        /// Fatal stalls per monitored hour; absent without monitored time.
        package var fatalPerHour: Double?
        /// Share of monitored time spent stalled (0…1); absent without monitored time.
        package var stalledFraction: Double?
        /// Stalls the monitors detected (the sum of the records' `stalls`, whether or not a report was kept).
        package var stallsRecorded: Int
        /// Awake spans the monitors saw.
        package var spans: Int
        /// Reports the monitors wrote.
        package var reportsWritten: Int
        /// Reports dropped, per reason (sum of the records' `reportsDropped`).
        package var reportsDropped: [String: Int]
        /// Sum of ``reportsDropped``.
        package var reportsDroppedTotal: Int
        /// Stalls summarized whose process has no session record.
        package var stallsWithoutSession: Int
        /// Earliest session start.
        package var firstStartedAt: Date?
        /// Latest session end (clean stop, or last heartbeat or alive mark).
        package var lastEndedAt: Date?
        /// Files of the sessions that ended without a clean stop.
        package var uncleanSessions: [String]

        /// Creates the JSON form of session totals.
        package init(_ totals: SessionTotals, rates: StallRates?, stallsWithoutSession: Int) {
            sessions = totals.sessions
            cleanlyStopped = totals.cleanlyStopped
            endedUncleanly = totals.endedUncleanly
            running = totals.running
            filteredOut = totals.filteredOut
            monitoredMs = totals.monitoredMs
            monitoredHours = totals.monitoredHours
            stallsPerHour = rates?.stallsPerHour
            stallMsPerHour = rates?.stallMsPerHour
            fatalPerHour = rates?.fatalPerHour
            stalledFraction = rates?.stalledFraction
            stallsRecorded = totals.stallsRecorded
            spans = totals.spans
            reportsWritten = totals.reportsWritten
            reportsDropped = totals.reportsDropped
            reportsDroppedTotal = totals.reportsDroppedTotal
            self.stallsWithoutSession = stallsWithoutSession
            firstStartedAt = totals.firstStartedAt
            lastEndedAt = totals.lastEndedAt
            uncleanSessions = totals.uncleanPaths
        }
    }
}
