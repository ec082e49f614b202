import Foundation

/// Renders a ``Summary`` as Markdown, e.g. for a CI job summary.
package struct SummaryMarkdownRenderer: Sendable {
    /// Stack frames shown per fingerprint.
    package var framesPerStack: Int
    /// How frame names are shown: simplified (default) or full.
    package var names: FrameNameStyle

    /// Creates a renderer.
    package init(framesPerStack: Int = StackFrameSummary.defaultLimit, names: FrameNameStyle = .simplified) {
        self.framesPerStack = framesPerStack
        self.names = names
    }

    /// The Markdown text, ending with a newline.
    package func render(_ summary: Summary, heading: String = "## Stall summary") -> String {
        let t = summary.totals
        var out = [heading, ""]
        let byAttribute = summary.grouping != .fingerprint
        var intro =
            "**\(t.stalls) stall\(t.stalls == 1 ? "" : "s")** in \(t.fingerprints) distinct fingerprint\(t.fingerprints == 1 ? "" : "s")"
        if let noun = summary.grouping.groupNoun {
            intro += " and \(summary.groupCount) \(noun)\(summary.groupCount == 1 ? "" : "s")"
        }
        intro +=
            ", total stall time **\(Durations.format(t.totalMs))** (\(t.ended) ended, \(t.inProgress) in progress, \(t.fatal) fatal)."
        if let worst = summary.worst {
            intro +=
                " Worst: **\(Durations.format(worst.durationMs))** (\(Markdown.code(worst.fingerprint)), \(worst.classification.rawValue))."
        }
        out.append(intro)
        var read =
            "Read \(t.reportsRead) report\(t.reportsRead == 1 ? "" : "s") from \(t.filesFound) file\(t.filesFound == 1 ? "" : "s")"
        if t.reportsFilteredOut > 0 { read += "; \(t.reportsFilteredOut) left out by filters" }
        if let rateLimited = t.rateLimited { read += " (\(rateLimited) compact, rate-limited)" }
        if t.problems > 0 { read += "; \(t.problems) file\(t.problems == 1 ? "" : "s") could not be used" }
        out.append("")
        out.append(read + ".")
        out += SessionMarkdownLines.lines(summary)
        guard !summary.groups.isEmpty else {
            out.append("")
            out.append("No stalls.")
            return (out + BlockingCallLines.markdown(summary, names: names)).joined(separator: "\n") + "\n"
        }
        out.append("")
        let withRates = summary.rates != nil
        let rows = summary.groups.enumerated().map { index, group -> [String] in
            let fatal = group.fatalCount
            var row = [
                "\(index + 1)", byAttribute ? Markdown.cell(group.label) : Markdown.code(group.fingerprint),
                "\(group.count)" + (fatal > 0 ? " (\(fatal) fatal)" : ""),
            ]
            if byAttribute { row.append("\(group.distinctFingerprints)") }
            row.append(Durations.format(group.totalMs))
            if let rates = summary.rates(of: group) {
                row += [StallRates.formatRate(rates.stallsPerHour), StallRates.formatTimeRate(rates.stallMsPerHour)]
            }
            return row + [
                Durations.format(group.p50Ms), Durations.format(group.p95Ms),
                Durations.format(group.p99Ms), Durations.format(group.maxMs), Markdown.cell(group.classificationMix),
                Markdown.code(StackFrameSummary.abbreviated(names.display(group.headline), limit: 80)),
            ]
        }
        var header = ["#", byAttribute ? (summary.grouping.groupNoun ?? "").capitalized : "Fingerprint", "Count"]
        if byAttribute { header.append("Fingerprints") }
        header.append("Total")
        if withRates { header += ["Stalls/h", "Time/h"] }
        header += ["p50", "p95", "p99", "Max", "Classification", "Top frame"]
        let numeric = Set([0, 2] + Array(3..<(header.count - 2)))
        out.append(Markdown.table(header, rows, rightAligned: numeric))
        if summary.omittedGroups > 0 {
            out.append("")
            let noun = summary.grouping.groupNoun ?? "fingerprint"
            out.append("… and \(summary.omittedGroups) more \(noun)\(summary.omittedGroups == 1 ? "" : "s").")
        }
        out.append("")
        out.append("### Stacks")
        for (index, group) in summary.groups.enumerated() {
            out.append("")
            let title =
                byAttribute
                ? "\(Markdown.cell(group.label)) (longest stall \(Markdown.code(group.worst.fingerprint)))"
                : Markdown.code(group.fingerprint)
            out.append(
                "**#\(index + 1)** \(title) — first seen \(SummaryTextRenderer.shortDate(group.firstSeen)), last seen \(SummaryTextRenderer.shortDate(group.lastSeen)), example \(Markdown.code(group.worst.path))"
            )
            out.append("")
            out += Self.stackLines(group, limit: framesPerStack, names: names)
        }
        out.append("")
        out.append("### Durations")
        out.append("")
        let buckets = summary.histogram.trimmed
        out.append(
            Markdown.table(
                ["Duration", "Stalls"], buckets.map { [Markdown.cell($0.label), "\($0.count)"] }, rightAligned: [1]))
        return (out + BlockingCallLines.markdown(summary, names: names)).joined(separator: "\n") + "\n"
    }

    /// Bullet lines of a group's representative stack.
    package static func stackLines(
        _ group: FingerprintStats, limit: Int, names: FrameNameStyle = .simplified
    ) -> [String] {
        if group.worst.stack.isEmpty {
            if let syscall = group.worst.syscall {
                return ["- no stack: thread was in syscall \(Markdown.code(syscall))"]
            }
            return ["- no stack captured"]
        }
        return group.worst.stack.prefix(limit).map { frame in
            var line = "- \(Markdown.code(names.display(frame.symbol)))"
            if let location = frame.location { line += " \(Markdown.code(location))" }
            if !frame.inApp { line += " (system)" }
            return line
        }
            + group.worst.asyncCallers.prefix(limit).map { frame in
                var line = "- awaited by \(Markdown.code(names.display(frame.symbol)))"
                if let location = frame.location { line += " \(Markdown.code(location))" }
                return line
            }
    }
}
