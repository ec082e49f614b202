/// The "Blocking calls" section of `stallreport summarize` (text and Markdown): the call sites
/// that blocked threads that must not block, most blocked time first, with count, total, p95 and
/// maximum, the kind of thread and the app's frame that made the call.
package enum BlockingCallLines {
    /// The text section (empty without blocking-calls reports).
    package static func text(_ summary: Summary, style: TextStyle, names: FrameNameStyle) -> [String] {
        guard let blocking = summary.blockingCalls else { return [] }
        var out = ["", style.bold("Blocking calls") + " (" + headline(blocking) + ")"]
        guard !blocking.callSites.isEmpty else { return out + ["No blocking calls."] }
        var table = TextTable(columns: [
            .init("#", .right), .init("CALL"), .init("THREAD"), .init("COUNT", .right), .init("TOTAL", .right),
            .init("P95", .right),
            .init("MAX", .right), .init("FINGERPRINT"), .init("CALL SITE"),
        ])
        for (index, site) in blocking.callSites.enumerated() {
            table.rows.append([
                "\(index + 1)", site.call, site.loopKind, "\(site.count)", Durations.format(site.totalMs),
                Durations.format(site.p95Ms),
                Durations.format(site.maxMs), site.fingerprint,
                StackFrameSummary.abbreviated(names.display(site.callSite ?? "?"), limit: 60),
            ])
        }
        out.append(table.render(header: style.bold) { _, column, text in column == 1 ? style.cyan(text) : text })
        if blocking.omittedFromSummary > 0 {
            out.append(
                style.dim(
                    "… and \(blocking.omittedFromSummary) more call site\(blocking.omittedFromSummary == 1 ? "" : "s") (raise --top to see them)"
                ))
        }
        return out
    }

    /// The Markdown section (empty without blocking-calls reports).
    package static func markdown(_ summary: Summary, names: FrameNameStyle) -> [String] {
        guard let blocking = summary.blockingCalls else { return [] }
        let line = headline(blocking)
        var out = ["", "### Blocking calls", "", line.prefix(1).uppercased() + line.dropFirst() + "."]
        guard !blocking.callSites.isEmpty else { return out }
        let rows = blocking.callSites.enumerated().map { index, site in
            [
                "\(index + 1)", Markdown.code(site.call), Markdown.cell(site.loopKind), "\(site.count)",
                Durations.format(site.totalMs),
                Durations.format(site.p95Ms), Durations.format(site.maxMs), Markdown.code(site.fingerprint),
                Markdown.code(StackFrameSummary.abbreviated(names.display(site.callSite ?? "?"), limit: 80)),
            ]
        }
        out.append("")
        out.append(
            Markdown.table(
                ["#", "Call", "Thread", "Count", "Total", "p95", "Max", "Fingerprint", "Call site"], rows,
                rightAligned: [0, 3, 4, 5, 6]))
        if blocking.omittedFromSummary > 0 {
            out += [
                "",
                "… and \(blocking.omittedFromSummary) more call site\(blocking.omittedFromSummary == 1 ? "" : "s").",
            ]
        }
        return out
    }

    /// `12 calls blocked 340 ms in 3 reports; 2 dropped by the monitors`.
    private static func headline(_ blocking: BlockingCallsSummary) -> String {
        var text =
            "\(blocking.calls) call\(blocking.calls == 1 ? "" : "s") blocked \(Durations.format(blocking.totalMs))"
            + " in \(blocking.reports) report\(blocking.reports == 1 ? "" : "s")"
        if blocking.filteredOut > 0 { text += ", \(blocking.filteredOut) left out by filters" }
        if blocking.droppedCalls > 0 { text += "; \(blocking.droppedCalls) dropped by the monitors" }
        if blocking.omittedCallSites > 0 {
            text += "; \(blocking.omittedCallSites) call sites left out by the monitors"
        }
        return text
    }
}
