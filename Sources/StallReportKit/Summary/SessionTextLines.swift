import Foundation

/// The stall-rate and session lines of the text summary, shown when session records were read.
package struct SessionTextLines: Sendable {
    /// Colours, or none.
    package var style: TextStyle
    /// Paths of sessions that ended without a clean stop listed before eliding the rest.
    package var uncleanPathsShown: Int

    /// Creates the renderer.
    package init(style: TextStyle = .plain, uncleanPathsShown: Int = 5) {
        self.style = style
        self.uncleanPathsShown = uncleanPathsShown
    }

    /// The lines (none without session records).
    package func lines(_ summary: Summary) -> [String] {
        guard let sessions = summary.sessions else { return [] }
        var out: [String] = []
        if let rates = summary.rates {
            var line = "stall rate: \(style.bold(StallRates.formatNumber(rates.stallsPerHour))) stalls and "
            line += "\(style.bold(Durations.format(rates.stallMsPerHour))) of stall time per monitored hour"
            line += String(format: " (%.2f %% of monitored time)", rates.stalledFraction * 100)
            var fatal = "\(StallRates.formatNumber(rates.fatalPerHour)) fatal per hour"
            if rates.fatal > 0 { fatal = style.red(fatal) }
            out.append(line + "; " + fatal)
        } else {
            out.append("stall rate: unknown (no monitored time in the session records)")
        }
        out.append(sessionLine(sessions))
        for path in sessions.uncleanPaths.prefix(uncleanPathsShown) {
            out.append("  ended without a clean stop: \(path)")
        }
        if sessions.uncleanPaths.count > uncleanPathsShown {
            out.append("  … and \(sessions.uncleanPaths.count - uncleanPathsShown) more")
        }
        out.append(droppedLine(sessions))
        if summary.stallsWithoutSession > 0 {
            let n = summary.stallsWithoutSession
            out.append(
                style.yellow(
                    "note: \(n) stall\(n == 1 ? "" : "s") came from processes without a session record (counted in the rates anyway)"
                ))
        }
        return out
    }

    /// `sessions: 2, 1.00 h monitored (…); 1 ended without a clean stop (crashed or killed), …`
    package func sessionLine(_ sessions: SessionTotals) -> String {
        var line = "sessions: \(sessions.sessions), \(StallRates.formatHours(sessions.monitoredMs)) monitored"
        line += ", \(sessions.stallsRecorded) stall\(sessions.stallsRecorded == 1 ? "" : "s") detected by the monitors"
        var unclean = "\(sessions.endedUncleanly) ended without a clean stop (crashed or killed)"
        if sessions.endedUncleanly > 0 { unclean = style.red(unclean) }
        line += "; \(sessions.cleanlyStopped) stopped cleanly, \(unclean)"
        if sessions.running > 0 { line += ", \(sessions.running) still running" }
        if sessions.filteredOut > 0 { line += "; \(sessions.filteredOut) outside --since/--until" }
        return line
    }

    /// `reports dropped: 3 (deletedForQuota 2, reportWrite 1)` or `reports dropped: none`.
    package func droppedLine(_ sessions: SessionTotals) -> String {
        let total = sessions.reportsDroppedTotal
        guard total > 0 else { return "reports dropped: none" }
        return style.yellow("reports dropped: \(total) (\(Self.reasons(sessions.reportsDropped)))")
    }

    /// `deletedForQuota 2, reportWrite 1`: reasons, most first, then by name.
    package static func reasons(_ dropped: [String: Int]) -> String {
        dropped.filter { $0.value > 0 }.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
            .map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }
}
