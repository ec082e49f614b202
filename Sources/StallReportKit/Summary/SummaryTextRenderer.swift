import Foundation

/// Renders a ``Summary`` as an aligned plain-text report for terminals and logs.
package struct SummaryTextRenderer: Sendable {
    /// Colours, or none.
    package var style: TextStyle
    /// Stack frames shown per fingerprint.
    package var framesPerStack: Int
    /// How frame names are shown: simplified (default) or full.
    package var names: FrameNameStyle

    /// All table columns (P50, P99, time per hour, first and last seen) instead of the compact
    /// table that fits ``maxWidth``.
    package var wide: Bool

    /// The default width the compact table and the stack lines fit in, in characters, when
    /// output does not go to a terminal and `COLUMNS` is not set.
    package static let maxWidth = 120

    /// Width the compact table and the stack lines fit in, in characters; the top frame is cut
    /// (with `…`) to fit, never wrapped.
    package var width: Int

    /// Narrowest the top-frame column is cut to, however wide the other columns are.
    static let minTopFrameWidth = 24

    /// Creates a renderer.
    package init(
        style: TextStyle = .plain, framesPerStack: Int = StackFrameSummary.defaultLimit,
        names: FrameNameStyle = .simplified,
        wide: Bool = false, width: Int = SummaryTextRenderer.maxWidth
    ) {
        self.width = width
        self.style = style
        self.framesPerStack = framesPerStack
        self.names = names
        self.wide = wide
    }

    /// The full text, ending with a newline.
    package func render(_ summary: Summary) -> String {
        var out: [String] = []
        let t = summary.totals
        var headline = "\(t.stalls) stall\(t.stalls == 1 ? "" : "s"), \(t.fingerprints) distinct (by fingerprint)"
        if let noun = summary.grouping.groupNoun {
            headline += " in \(summary.groupCount) \(noun)\(summary.groupCount == 1 ? "" : "s")"
        }
        out.append(style.bold(headline + ", total stall time \(Durations.format(t.totalMs))"))
        var status = "status: \(t.ended) ended, \(t.inProgress) in progress, \(t.fatal) fatal"
        if t.fatal > 0 { status = style.red(status) }
        out.append(status)
        var read =
            "read: \(t.reportsRead) report\(t.reportsRead == 1 ? "" : "s") from \(t.filesFound) file\(t.filesFound == 1 ? "" : "s")"
        if t.reportsFilteredOut > 0 { read += ", \(t.reportsFilteredOut) left out by filters" }
        if let rateLimited = t.rateLimited { read += " (\(rateLimited) compact, rate-limited)" }
        if t.problems > 0 {
            read += ", " + style.yellow("\(t.problems) problem\(t.problems == 1 ? "" : "s") (see stderr)")
        }
        out.append(read)
        out += SessionTextLines(style: style).lines(summary).flatMap(wrapped)
        if let worst = summary.worst {
            out += wrapped(
                "worst: \(style.bold(Durations.format(worst.durationMs))) \(worst.fingerprint) \(worst.classification.rawValue), \(worst.status.rawValue), started \(SummaryTextRenderer.shortDate(worst.startedAt)), \(worst.path)"
            )
        }
        guard !summary.groups.isEmpty else {
            out.append("")
            out.append("No stalls.")
            return finished(out + BlockingCallLines.text(summary, style: style, names: names))
        }
        out.append("")
        let byAttribute = summary.grouping != .fingerprint
        let withRates = summary.rates != nil
        var columns: [TextTable.Column] = [
            .init("#", .right), .init(summary.grouping.columnTitle), .init("COUNT", .right),
        ]
        if byAttribute { columns.append(.init("FPS", .right)) }
        columns.append(.init("TOTAL", .right))
        if withRates { columns.append(.init("STALLS/H", .right)) }
        if withRates && wide { columns.append(.init("TIME/H", .right)) }
        columns += wide ? [.init("P50", .right), .init("P95", .right), .init("P99", .right)] : [.init("P95", .right)]
        columns += [.init("MAX", .right), .init("CLASSIFICATION")]
        if wide { columns += [.init("FIRST SEEN"), .init("LAST SEEN")] }
        columns.append(.init("TOP FRAME"))
        var table = TextTable(columns: columns)
        for (index, group) in summary.groups.enumerated() {
            var count = "\(group.count)"
            let fatal = group.fatalCount
            if fatal > 0 { count += " (\(fatal) fatal)" }
            var row = ["\(index + 1)", group.label, count]
            if byAttribute { row.append("\(group.distinctFingerprints)") }
            row.append(Durations.format(group.totalMs))
            if let rates = summary.rates(of: group) {
                row.append(StallRates.formatRate(rates.stallsPerHour))
                if wide { row.append(StallRates.formatTimeRate(rates.stallMsPerHour)) }
            }
            row +=
                wide
                ? [Durations.format(group.p50Ms), Durations.format(group.p95Ms), Durations.format(group.p99Ms)]
                : [Durations.format(group.p95Ms)]
            row += [Durations.format(group.maxMs), group.classificationMix]
            if wide {
                row += [SummaryTextRenderer.shortDate(group.firstSeen), SummaryTextRenderer.shortDate(group.lastSeen)]
            }
            row.append(names.display(group.headline))
            table.rows.append(row)
        }
        fitTopFrames(&table)
        out.append(
            table.render(header: style.bold) { row, column, text in
                switch column {
                case 1: return style.cyan(text)
                case 2 where summary.groups[row].fatalCount > 0: return style.red(text)
                default: return text
                }
            })
        if summary.omittedGroups > 0 {
            let noun = summary.grouping.groupNoun ?? "fingerprint"
            out.append(
                style.dim(
                    "… and \(summary.omittedGroups) more \(noun)\(summary.omittedGroups == 1 ? "" : "s") (raise --top to see them)"
                ))
        }
        out.append("")
        out.append(style.bold("Stacks"))
        for (index, group) in summary.groups.enumerated() {
            var title = "#\(index + 1) \(style.cyan(group.label))"
            if byAttribute { title += " — longest stall: \(group.worst.fingerprint)" }
            out.append(title)
            out += stackLines(group, limit: framesPerStack)
            out += asyncCallerLines(group, limit: framesPerStack)
            out.append(
                "    example: \(wide ? group.worst.path : StackFrameSummary.middleAbbreviated(group.worst.path, limit: max(8, width - 13)))"
            )
        }
        out.append("")
        out.append(style.bold("Durations"))
        out += HistogramRenderer.lines(summary.histogram, style: style)
        return finished(out + BlockingCallLines.text(summary, style: style, names: names))
    }

    /// The `awaited by symbol (file:line)` lines of the app's async callers of a group's
    /// representative stack (none when its stall ran in no task).
    package func asyncCallerLines(_ group: FingerprintStats, limit: Int) -> [String] {
        group.worst.asyncCallers.prefix(limit).map { frame in
            let name = names.display(frame.symbol)
            var line = "    awaited by \(wide ? name : StackFrameSummary.abbreviated(name, limit: max(8, width - 15)))"
            if let location = frame.location {
                line +=
                    " "
                    + style.dim(
                        "(\(wide ? location : StackFrameSummary.middleAbbreviated(location, limit: max(8, width - 15))))"
                    )
            }
            return line
        }
    }

    /// The `at symbol (file:line)` lines of a group's representative stack.
    package func stackLines(_ group: FingerprintStats, limit: Int) -> [String] {
        if group.worst.stack.isEmpty {
            if let syscall = group.worst.syscall { return ["    no stack: thread was in syscall \(syscall)"] }
            return ["    no stack captured"]
        }
        return group.worst.stack.prefix(limit).map { frame in
            let name = names.display(frame.symbol)
            var line = "    at \(wide ? name : StackFrameSummary.abbreviated(name, limit: width - 7))"
            if let location = frame.location {
                // A location that would run past the width goes on a line of its own.
                let text = "(\(location))"
                if wide || line.count + 1 + text.count <= width {
                    line += " " + style.dim(text)
                } else {
                    line += "\n       " + style.dim(StackFrameSummary.middleAbbreviated(text, limit: width - 7))
                }
            }
            if !frame.inApp { line += style.dim(" [system]") }
            return line
        }
    }

    /// `line` as is when it fits ``width`` (or the table is wide), else broken after the last
    /// `; ` or `, ` that fits, the rest on indented lines (``LineFitting``).
    func wrapped(_ line: String) -> [String] {
        wide ? [line] : LineFitting.wrapped(line, width: width)
    }

    /// The lines joined, each ending with a newline; unless the table is wide, every line fits
    /// ``width`` (what the shortening of names and locations left too long is cut with `…`).
    private func finished(_ lines: [String]) -> String {
        let fitted = wide ? lines : lines.flatMap { LineFitting.fit($0, width: width) }
        return fitted.joined(separator: "\n") + "\n"
    }

    /// Columns the compact table leaves out, in this order, while the top frame would get less
    /// than ``minTopFrameWidth`` of ``width`` (the wide table and the JSON have them all).
    static let droppableColumns = ["P95", "STALLS/H", "MAX"]

    /// Cuts the last column (the top frame) so that the table fits ``width``: to 60 characters
    /// in the wide table, to what the other columns leave (at least 24) in the compact one, which
    /// first leaves out ``droppableColumns`` on a narrow terminal.
    private func fitTopFrames(_ table: inout TextTable) {
        func used(_ table: TextTable) -> Int {
            (0..<table.columns.count - 1).reduce(0) { sum, column in
                sum + table.rows.map { $0[column].count }.reduce(table.columns[column].header.count, max) + 2
            }
        }
        var limit = 60
        if !wide {
            for header in Self.droppableColumns where width - used(table) < Self.minTopFrameWidth {
                guard let column = table.columns.firstIndex(where: { $0.header == header }) else { continue }
                table.columns.remove(at: column)
                for row in table.rows.indices { table.rows[row].remove(at: column) }
            }
            limit = max(Self.minTopFrameWidth, width - used(table))
        }
        let last = table.columns.count - 1
        for row in table.rows.indices {
            table.rows[row][last] = StackFrameSummary.abbreviated(table.rows[row][last], limit: limit)
        }
    }

    /// `2026-03-01 12:00:03Z`: a start time to the second, UTC.
    package static func shortDate(_ date: Date) -> String {
        let text = ReportCoding.formatDate(date)
        return String(text.prefix(19)).replacingOccurrences(of: "T", with: " ") + "Z"
    }
}

/// Text bars for a ``DurationHistogram``.
package enum HistogramRenderer {
    /// One line per bucket from the first to the last non-empty one: label, bar, count.
    package static func lines(_ histogram: DurationHistogram, style: TextStyle, width: Int = 40) -> [String] {
        let buckets = histogram.trimmed
        guard let most = buckets.map(\.count).max(), most > 0 else { return ["  (no stalls)"] }
        let labelWidth = buckets.map(\.label.count).max() ?? 0
        return buckets.map { bucket in
            let length =
                bucket.count == 0 ? 0 : max(1, Int((Double(bucket.count) / Double(most) * Double(width)).rounded()))
            let label = bucket.label + String(repeating: " ", count: labelWidth - bucket.label.count)
            let bar = String(repeating: "█", count: length)
            return "  \(label)  \(style.cyan(bar))\(length > 0 ? " " : "")\(bucket.count)"
        }
    }
}
