import Foundation

/// The human verdict of `stallreport gate`: every budget with its outcome and the offending
/// fingerprints, the baseline comparison, suppressions, and a final verdict line.
package struct GateTextRenderer: Sendable {
    /// Colours, or none.
    package var style: TextStyle
    /// Offending fingerprints listed per budget before eliding the rest.
    package var offendersShown: Int
    /// How frame names are shown: simplified (default) or full.
    package var names: FrameNameStyle
    /// Width every line fits in, in characters (names and paths shortened, long lines broken
    /// between list items, never inside a word), or nil for no limit.
    package var width: Int?

    /// Creates a renderer.
    package init(
        style: TextStyle = .plain, offendersShown: Int = 10, names: FrameNameStyle = .simplified, width: Int? = nil
    ) {
        self.style = style
        self.offendersShown = offendersShown
        self.names = names
        self.width = width
    }

    /// `name` shortened (``LineFitting/shortened(name:location:width:)``) to what a line that
    /// already shows `used` characters leaves of ``width``.
    private func fitted(
        _ name: String, location: String? = nil, after used: String, before rest: String = ""
    ) -> (name: String, location: String?) {
        guard let width else { return (name, location) }
        let room = width - LineFitting.visibleWidth(used) - LineFitting.visibleWidth(rest)
        return LineFitting.shortened(name: name, location: location, width: room)
    }

    /// The full text, ending with a newline.
    package func render(_ result: GateResult) -> String {
        var out: [String] = []
        var scope =
            "\(result.stallsCounted) stall\(result.stallsCounted == 1 ? "" : "s") counted (\(result.counted.count) fingerprint\(result.counted.count == 1 ? "" : "s")), total stall time \(Durations.format(result.totalCountedMs))"
        let suppressedStalls = result.suppressed.reduce(0) { $0 + ($1.group?.count ?? 0) }
        if suppressedStalls > 0 { scope += "; \(suppressedStalls) suppressed" }
        if result.reportsFilteredOut > 0 {
            var why = "left out by filters"
            if let ignore = result.config.ignoreShorterThanMs {
                why = "shorter than \(Durations.format(ignore)) or outside --since/--until"
            }
            scope += "; \(result.reportsFilteredOut) \(why)"
        }
        if !result.problems.isEmpty {
            scope +=
                "; "
                + style.yellow(
                    "\(result.problems.count) unusable file\(result.problems.count == 1 ? "" : "s") (see stderr)")
        }
        out.append("stallreport gate: " + scope)

        if !result.checks.isEmpty {
            out.append("")
            out.append(style.bold("Budgets"))
            for check in result.checks {
                let mark = check.passed ? style.green("PASS") : style.red("FAIL")
                out.append("  \(mark) \(check.verdictLine)  \(style.dim("(\(check.kind.flag))"))")
                guard !check.passed else { continue }
                for group in check.offenders.prefix(offendersShown) {
                    let head = "       \(style.cyan(group.fingerprint))  \(check.kind.format(check.value(of: group)))  "
                    out.append(head + describe(group, after: head))
                }
                if check.offenders.count > offendersShown {
                    out.append("       … and \(check.offenders.count - offendersShown) more")
                }
            }
        }

        if !result.blockingChecks.isEmpty {
            out.append("")
            out.append(
                style.bold("Blocking calls")
                    + " (\(result.blockingReportsRead) blocking-calls report\(result.blockingReportsRead == 1 ? "" : "s"))"
            )
            for check in result.blockingChecks {
                let mark = check.passed ? style.green("PASS") : style.red("FAIL")
                out.append("  \(mark) \(check.verdictLine)  \(style.dim("(\(check.kind.flag))"))")
                guard !check.passed else { continue }
                for site in check.offenders.prefix(offendersShown) {
                    out.append(
                        "       \(style.cyan(site.fingerprint))  \(Durations.format(site.totalMs))  \(BlockingBudgetCheck.describe(site, names: names))"
                    )
                }
                if check.offenders.count > offendersShown {
                    out.append("       … and \(check.offenders.count - offendersShown) more")
                }
            }
        }

        if let changes = result.changes {
            let tolerance = result.config.tolerance ?? GateConfig.defaultTolerance
            let minimum = result.config.minOccurrences ?? GateConfig.defaultMinOccurrences
            out.append("")
            let baselinePath = result.baselinePath.map { path in
                width.map { StackFrameSummary.middleAbbreviated(path, limit: max(16, $0 - 60)) } ?? path
            }
            out.append(
                style.bold("Baseline")
                    + " (\(baselinePath ?? "baseline"); tolerance \(Int(saturating: (tolerance * 100).rounded()))%, min occurrences \(minimum))"
            )
            for change in changes where change.kind != .unchanged {
                out.append("  " + changeLine(change, minimum: minimum))
            }
            let unchanged = changes.filter { $0.kind == .unchanged }.count
            out.append(
                "  \(style.dim("SAME")) \(unchanged) known fingerprint\(unchanged == 1 ? "" : "s") within tolerance")
        }

        if let changes = result.blockingChanges {
            let minimum = result.config.minOccurrences ?? GateConfig.defaultMinOccurrences
            out.append("")
            out.append(style.bold("Blocking calls against the baseline") + " (call site@thread kind)")
            for change in changes where change.kind != .unchanged {
                out.append(
                    "  " + changeLine(change, minimum: minimum).replacingOccurrences(of: " stall", with: " call"))
            }
            let unchanged = changes.filter { $0.kind == .unchanged }.count
            out.append(
                "  \(style.dim("SAME")) \(unchanged) known call site\(unchanged == 1 ? "" : "s") within tolerance")
        }

        if !result.suppressed.isEmpty || !result.expired.isEmpty {
            out.append("")
            out.append(style.bold("Suppressions"))
            for match in result.suppressed {
                let count = match.group?.count ?? 0
                out.append(
                    "  \(style.dim("SUPP")) \(match.suppression.fingerprint)  \(count) stall\(count == 1 ? "" : "s") not counted until \(match.suppression.expires): \(match.suppression.reason)"
                )
            }
            for match in result.expired {
                let occurred =
                    match.group.map { "counted again (\($0.count) stall\($0.count == 1 ? "" : "s"))" }
                    ?? "did not occur; the entry can be removed"
                out.append(
                    "  \(style.yellow("EXPIRED")) \(match.suppression.fingerprint)  suppression expired \(match.suppression.expires), \(occurred): \(match.suppression.reason)"
                )
            }
        }

        out.append("")
        out.append(verdict(result))
        let lines = width.map { width in out.flatMap { LineFitting.fit($0, width: width) } } ?? out
        return lines.joined(separator: "\n") + "\n"
    }

    /// One line for a baseline change.
    package func changeLine(_ change: FingerprintChange, minimum: Int) -> String {
        let head =
            change.head.map { "\($0.count) stall\($0.count == 1 ? "" : "s"), p95 \(Durations.format($0.p95Ms))" } ?? ""
        switch change.kind {
        case .new:
            let mark = change.belowMinimum ? style.yellow("WARN") : style.red("FAIL")
            let note = change.belowMinimum ? " (fewer than \(minimum) occurrences: not failing)" : ""
            let start = "  \(mark) new \(style.cyan(change.fingerprint))  \(head)  "
            return String(start.dropFirst(2)) + fitted(names.display(change.headline), after: start, before: note).name
                + note
        case .regressed:
            let mark = change.belowMinimum ? style.yellow("WARN") : style.red("FAIL")
            let note = change.belowMinimum ? " (fewer than \(minimum) occurrences: not failing)" : ""
            let start =
                "  \(mark) regressed \(style.cyan(change.fingerprint))  \(change.reasons.joined(separator: ", "))  "
            return String(start.dropFirst(2)) + fitted(names.display(change.headline), after: start, before: note).name
                + note
        case .fixed:
            let base = change.base.map { "was \($0.count) stall\($0.count == 1 ? "" : "s")" } ?? ""
            let start = "  \(style.green("GOOD")) fixed \(style.cyan(change.fingerprint))  \(base), none now  "
            return String(start.dropFirst(2)) + fitted(names.display(change.headline), after: start).name
        case .unchanged:
            return "\(style.dim("SAME")) \(change.fingerprint)  \(head)"
        }
    }

    /// `PASSED` or `FAILED` with what failed.
    package func verdict(_ result: GateResult) -> String {
        if result.passed {
            var good = ""
            if !result.fixed.isEmpty {
                good = "; \(result.fixed.count) fixed fingerprint\(result.fixed.count == 1 ? "" : "s")"
            }
            let budgets = result.checks.count + result.blockingChecks.count
            return style.bold(style.green("Verdict: PASSED"))
                + " (\(budgets) budget\(budgets == 1 ? "" : "s") checked\(good))"
        }
        var parts: [String] = []
        let failedNames = result.failedChecks.map(\.kind.rawValue) + result.failedBlockingChecks.map(\.kind.rawValue)
        if !failedNames.isEmpty {
            parts.append(
                "\(failedNames.count) budget\(failedNames.count == 1 ? "" : "s") violated (\(failedNames.joined(separator: ", ")))"
            )
        }
        let new = result.failingChanges.filter { $0.kind == .new }.count
        if new > 0 { parts.append("\(new) new fingerprint\(new == 1 ? "" : "s")") }
        let regressed = result.failingChanges.filter { $0.kind == .regressed }.count
        if regressed > 0 { parts.append("\(regressed) regressed fingerprint\(regressed == 1 ? "" : "s")") }
        for kind in [FingerprintChange.Kind.new, .regressed] {
            let sites = result.failingBlockingChanges.filter { $0.kind == kind }.count
            if sites > 0 { parts.append("\(sites) \(kind.rawValue) blocking call site\(sites == 1 ? "" : "s")") }
        }
        return style.bold(style.red("Verdict: FAILED")) + " — " + parts.joined(separator: ", ")
    }

    /// The group's headline and the location of its leaf, shortened to what `used` leaves.
    private func describe(_ group: FingerprintStats, after used: String) -> String {
        let location = group.worst.stack.first?.location.map { "(\($0))" }
        let shown = fitted(names.display(group.headline), location: location, after: used)
        var text = shown.name
        if let location = shown.location { text += " " + style.dim(location) }
        return text
    }
}
