import Foundation

/// Renders a ``Summary`` as Markdown, e.g. for a CI job summary.
public struct SummaryMarkdownRenderer: Sendable {
    /// Stack frames shown per fingerprint.
    public var framesPerStack: Int

    /// Creates a renderer.
    public init(framesPerStack: Int = StackFrameSummary.defaultLimit) {
        self.framesPerStack = framesPerStack
    }

    /// The Markdown text, ending with a newline.
    public func render(_ summary: Summary, heading: String = "## Stall summary") -> String {
        let t = summary.totals
        var out = [heading, ""]
        var intro = "**\(t.stalls) stall\(t.stalls == 1 ? "" : "s")** in \(t.fingerprints) distinct fingerprint\(t.fingerprints == 1 ? "" : "s"), total stall time **\(Durations.format(t.totalMs))** (\(t.ended) ended, \(t.inProgress) in progress, \(t.fatal) fatal)."
        if let worst = summary.worst {
            intro += " Worst: **\(Durations.format(worst.durationMs))** (\(Markdown.code(worst.fingerprint)), \(worst.classification.rawValue))."
        }
        out.append(intro)
        var read = "Read \(t.reportsRead) report\(t.reportsRead == 1 ? "" : "s") from \(t.filesFound) file\(t.filesFound == 1 ? "" : "s")"
        if t.reportsFilteredOut > 0 { read += "; \(t.reportsFilteredOut) left out by filters" }
        if t.problems > 0 { read += "; \(t.problems) file\(t.problems == 1 ? "" : "s") could not be used" }
        out.append("")
        out.append(read + ".")
        guard !summary.groups.isEmpty else {
            out.append("")
            out.append("No stalls.")
            return out.joined(separator: "\n") + "\n"
        }
        out.append("")
        let rows = summary.groups.enumerated().map { index, group -> [String] in
            let fatal = group.statuses[.fatal] ?? 0
            return [
                "\(index + 1)", Markdown.code(group.fingerprint),
                "\(group.count)" + (fatal > 0 ? " (\(fatal) fatal)" : ""),
                Durations.format(group.totalMs), Durations.format(group.p50Ms), Durations.format(group.p95Ms),
                Durations.format(group.p99Ms), Durations.format(group.maxMs), Markdown.cell(group.classificationMix),
                Markdown.code(StackFrameSummary.abbreviated(group.headline, limit: 80)),
            ]
        }
        out.append(Markdown.table(["#", "Fingerprint", "Count", "Total", "p50", "p95", "p99", "Max", "Classification", "Top frame"],
                                  rows, rightAligned: [0, 2, 3, 4, 5, 6, 7]))
        if summary.omittedGroups > 0 {
            out.append("")
            out.append("… and \(summary.omittedGroups) more fingerprint\(summary.omittedGroups == 1 ? "" : "s").")
        }
        out.append("")
        out.append("### Stacks")
        for (index, group) in summary.groups.enumerated() {
            out.append("")
            out.append("**#\(index + 1)** \(Markdown.code(group.fingerprint)) — first seen \(SummaryTextRenderer.shortDate(group.firstSeen)), last seen \(SummaryTextRenderer.shortDate(group.lastSeen)), example \(Markdown.code(group.worst.path))")
            out.append("")
            out += Self.stackLines(group, limit: framesPerStack)
        }
        out.append("")
        out.append("### Durations")
        out.append("")
        let buckets = summary.histogram.trimmed
        out.append(Markdown.table(["Duration", "Stalls"], buckets.map { [Markdown.cell($0.label), "\($0.count)"] }, rightAligned: [1]))
        return out.joined(separator: "\n") + "\n"
    }

    /// Bullet lines of a group's representative stack.
    public static func stackLines(_ group: FingerprintStats, limit: Int) -> [String] {
        if group.worst.stack.isEmpty {
            if let syscall = group.worst.syscall { return ["- no stack: thread was in syscall \(Markdown.code(syscall))"] }
            return ["- no stack captured"]
        }
        return group.worst.stack.prefix(limit).map { frame in
            var line = "- \(Markdown.code(frame.symbol))"
            if let location = frame.location { line += " \(Markdown.code(location))" }
            if !frame.inApp { line += " (system)" }
            return line
        }
    }
}
