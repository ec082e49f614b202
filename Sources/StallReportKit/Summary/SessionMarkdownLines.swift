import Foundation

/// The stall-rate and session paragraph of the Markdown summary, shown when session records were read.
package enum SessionMarkdownLines {
    /// The lines, starting with an empty line (none without session records).
    package static func lines(_ summary: Summary) -> [String] {
        guard let sessions = summary.sessions else { return [] }
        var out = [""]
        if let rates = summary.rates {
            out.append(
                "**Stall rate: \(StallRates.formatNumber(rates.stallsPerHour)) stalls and \(Durations.format(rates.stallMsPerHour)) of stall time per monitored hour**"
                    + String(format: " (%.2f %% of monitored time; ", rates.stalledFraction * 100)
                    + "\(StallRates.formatNumber(rates.fatalPerHour)) fatal per hour).")
        } else {
            out.append("**Stall rate: unknown** (no monitored time in the session records).")
        }
        out.append("")
        var rows: [[String]] = [
            ["Session records", "\(sessions.sessions)"],
            ["Monitored time", StallRates.formatHours(sessions.monitoredMs)],
            ["Stalls detected by the monitors", "\(sessions.stallsRecorded)"],
            ["Stopped cleanly", "\(sessions.cleanlyStopped)"],
            ["Ended without a clean stop (crashed or killed)", "\(sessions.endedUncleanly)"],
        ]
        if sessions.running > 0 { rows.append(["Still running", "\(sessions.running)"]) }
        if sessions.filteredOut > 0 { rows.append(["Outside --since/--until", "\(sessions.filteredOut)"]) }
        let dropped = sessions.reportsDroppedTotal
        rows.append([
            "Reports dropped",
            dropped == 0 ? "0" : "\(dropped) (\(Markdown.cell(SessionTextLines.reasons(sessions.reportsDropped))))",
        ])
        if summary.stallsWithoutSession > 0 {
            rows.append(["Stalls from processes without a session record", "\(summary.stallsWithoutSession)"])
        }
        out.append(Markdown.table(["Sessions", "Value"], rows, rightAligned: [1]))
        return out
    }
}
