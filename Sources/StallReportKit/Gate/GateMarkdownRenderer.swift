import Foundation

/// The gate's verdict as Markdown, appended to `GITHUB_STEP_SUMMARY` in GitHub Actions.
package struct GateMarkdownRenderer: Sendable {
    /// Creates a renderer.
    /// How frame names are shown: simplified (default) or full.
    package var names: FrameNameStyle

    /// Creates a renderer.
    package init(names: FrameNameStyle = .simplified) {
        self.names = names
    }

    /// The Markdown text, ending with a newline.
    package func render(_ result: GateResult) -> String {
        var out: [String] = []
        out.append(result.passed ? "## ✅ Stall gate passed" : "## ❌ Stall gate failed")
        out.append("")
        out.append(
            "\(result.stallsCounted) stall\(result.stallsCounted == 1 ? "" : "s") counted in \(result.counted.count) fingerprint\(result.counted.count == 1 ? "" : "s"), total stall time \(Durations.format(result.totalCountedMs))."
        )
        if !result.checks.isEmpty {
            out.append("")
            out.append("### Budgets")
            out.append("")
            let rows = result.checks.map { check -> [String] in
                let offenders = check.offenders.prefix(5).map { Markdown.code(String($0.fingerprint)) }.joined(
                    separator: ", ")
                return [
                    check.passed ? "✅" : "❌", Markdown.cell(check.kind.title), Markdown.code(check.kind.flag),
                    check.kind.format(check.limit), check.kind.format(check.actual),
                    offenders + (check.offenders.count > 5 ? " … +\(check.offenders.count - 5)" : ""),
                ]
            }
            out.append(
                Markdown.table(
                    ["", "Budget", "Flag", "Limit", "Actual", "Offending fingerprints"], rows, rightAligned: [3, 4]))
        }
        if !result.blockingChecks.isEmpty {
            out.append("")
            out.append("### Blocking calls")
            out.append("")
            let rows = result.blockingChecks.map { check -> [String] in
                let offenders = check.offenders.prefix(5).map {
                    "\(Markdown.code($0.fingerprint)) \(Markdown.cell($0.call)) \(Durations.format($0.totalMs))"
                }
                return [
                    check.passed ? "✅" : "❌", Markdown.cell(check.kind.title), Markdown.code(check.kind.flag),
                    Durations.format(check.limit),
                    Durations.format(check.actual),
                    offenders.joined(separator: ", ")
                        + (check.offenders.count > 5 ? " … +\(check.offenders.count - 5)" : ""),
                ]
            }
            out.append(
                Markdown.table(
                    ["", "Budget", "Flag", "Limit", "Actual", "Offending call sites"], rows, rightAligned: [3, 4]))
        }
        if let changes = result.changes, changes.contains(where: { $0.kind != .unchanged }) {
            out.append("")
            out.append("### Baseline")
            out.append("")
            let rows = changes.filter { $0.kind != .unchanged }.map { change -> [String] in
                let mark: String
                switch change.kind {
                case .new, .regressed: mark = change.belowMinimum ? "⚠️" : "❌"
                case .fixed: mark = "🎉"
                case .unchanged: mark = ""
                }
                let detail: String
                switch change.kind {
                case .regressed: detail = change.reasons.joined(separator: "; ")
                case .new: detail = change.head.map { "\($0.count) stalls, p95 \(Durations.format($0.p95Ms))" } ?? ""
                case .fixed: detail = change.base.map { "was \($0.count) stalls" } ?? ""
                case .unchanged: detail = ""
                }
                return [
                    mark, change.kind.rawValue, Markdown.code(change.fingerprint), Markdown.cell(detail),
                    Markdown.code(names.display(change.headline)),
                ]
            }
            out.append(Markdown.table(["", "Change", "Fingerprint", "Detail", "Top frame"], rows))
        }
        if let changes = result.blockingChanges, changes.contains(where: { $0.kind != .unchanged }) {
            out.append("")
            out.append("### Blocking calls against the baseline")
            out.append("")
            let rows = changes.filter { $0.kind != .unchanged }.map { change -> [String] in
                let mark = change.kind == .fixed ? "🎉" : change.belowMinimum ? "⚠️" : "❌"
                let detail =
                    change.kind == .regressed
                    ? change.reasons.joined(separator: "; ")
                    : change.head.map { "\($0.count) calls, total \(Durations.format($0.totalMs))" } ?? "none now"
                return [
                    mark, change.kind.rawValue, Markdown.code(change.fingerprint), Markdown.cell(detail),
                    Markdown.code(names.display(change.headline)),
                ]
            }
            out.append(Markdown.table(["", "Change", "Call site", "Detail", "Call"], rows))
        }
        if !result.suppressed.isEmpty || !result.expired.isEmpty {
            out.append("")
            out.append("### Suppressions")
            out.append("")
            for match in result.suppressed {
                out.append(
                    "- suppressed \(Markdown.code(match.suppression.fingerprint)) until \(match.suppression.expires): \(match.suppression.reason)"
                )
            }
            for match in result.expired {
                out.append(
                    "- **expired** \(Markdown.code(match.suppression.fingerprint)) on \(match.suppression.expires)\(match.group == nil ? " (did not occur)" : ", counted again"): \(match.suppression.reason)"
                )
            }
        }
        if !result.problems.isEmpty {
            out.append("")
            out.append(
                "\(result.problems.count) report file\(result.problems.count == 1 ? "" : "s") could not be used (see the log)."
            )
        }
        return out.joined(separator: "\n") + "\n"
    }
}
