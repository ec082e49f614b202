import Foundation

/// The comparison of two sets of reports (`stallreport diff`): new, regressed, fixed and
/// unchanged fingerprints with their counts and p95 change.
public struct DiffResult: Sendable {
    /// Every fingerprint of either side, new first, then regressed, fixed, unchanged.
    public var changes: [FingerprintChange]
    /// The policy that decided what counts as a regression.
    package var policy: RegressionPolicy
    /// Stalls and total stall time on the base side.
    var baseStalls: Int
    /// Total stall time on the base side, in milliseconds.
    var baseTotalMs: Double
    /// Stalls on the head side.
    var headStalls: Int
    /// Total stall time on the head side, in milliseconds.
    var headTotalMs: Double

    /// Compares base and head collections.
    public init(base: ReportCollection, head: ReportCollection, policy: RegressionPolicy) {
        let baseStats = base.stats()
        let headStats = head.stats()
        self.policy = policy
        changes = policy.compare(base: baseStats.map(Baseline.Entry.init), head: headStats.map(Baseline.Entry.init))
        baseStalls = baseStats.reduce(0) { $0 + $1.count }
        baseTotalMs = baseStats.reduce(0) { $0 + $1.totalMs }
        headStalls = headStats.reduce(0) { $0 + $1.count }
        headTotalMs = headStats.reduce(0) { $0 + $1.totalMs }
    }

    /// Changes of one kind.
    public func changes(_ kind: FingerprintChange.Kind) -> [FingerprintChange] {
        changes.filter { $0.kind == kind }
    }
}

/// The JSON document `stallreport diff --format json` prints (`formatVersion` 1, stable keys;
/// optional keys left out when there is no value).
package struct DiffJSON: Codable, Sendable, Equatable {
    /// Version of this document's layout: 1.
    package var formatVersion = 1
    /// Always `diff`.
    package var kind = "diff"
    /// Relative tolerance used.
    package var tolerance: Double
    /// Minimum occurrences used.
    package var minOccurrences: Int
    /// Totals of each side.
    package var base: SideJSON
    /// Totals of the head side.
    package var head: SideJSON
    /// Number of fingerprints per kind: `new`, `regressed`, `fixed`, `unchanged` (all present).
    package var counts: [String: Int]
    /// Every fingerprint of either side.
    package var fingerprints: [ChangeJSON]

    /// Totals of one side.
    package struct SideJSON: Codable, Sendable, Equatable {
        /// Stalls.
        package var stalls: Int
        /// Sum of durations, in milliseconds.
        package var totalMs: Double
    }

    /// One fingerprint's change.
    package struct ChangeJSON: Codable, Sendable, Equatable {
        /// The fingerprint.
        package var fingerprint: String
        /// `new`, `regressed`, `fixed` or `unchanged`.
        package var change: FingerprintChange.Kind
        /// Stalls in the base (0 when absent).
        package var baseCount: Int
        /// Stalls in the head (0 when absent).
        package var headCount: Int
        /// Base p95, when present in the base.
        package var baseP95Ms: Double?
        /// Head p95, when present in the head.
        package var headP95Ms: Double?
        /// Relative p95 change (0.25 = +25 %), when present on both sides.
        package var p95Change: Double?
        /// What regressed.
        package var reasons: [String]
        /// New or regressed but with fewer head occurrences than `minOccurrences`.
        package var belowMinOccurrences: Bool
        /// The top frame.
        package var topFrame: String
    }

    /// Creates the JSON form of a diff.
    package init(_ diff: DiffResult) {
        tolerance = diff.policy.tolerance
        minOccurrences = diff.policy.minOccurrences
        base = SideJSON(stalls: diff.baseStalls, totalMs: diff.baseTotalMs)
        head = SideJSON(stalls: diff.headStalls, totalMs: diff.headTotalMs)
        counts = Dictionary(
            uniqueKeysWithValues: FingerprintChange.Kind.allCases.map { ($0.rawValue, diff.changes($0).count) })
        fingerprints = diff.changes.map { change in
            var p95Change: Double?
            if let b = change.base?.p95Ms, let h = change.head?.p95Ms, b > 0 { p95Change = (h - b) / b }
            return ChangeJSON(
                fingerprint: change.fingerprint, change: change.kind, baseCount: change.base?.count ?? 0,
                headCount: change.head?.count ?? 0, baseP95Ms: change.base?.p95Ms, headP95Ms: change.head?.p95Ms,
                p95Change: p95Change, reasons: change.reasons, belowMinOccurrences: change.belowMinimum,
                topFrame: change.headline)
        }
    }

    /// Pretty JSON with sorted keys and a trailing newline.
    package func encoded() throws -> Data {
        var data = try ReportCoding.makeEncoder(pretty: true).encode(self)
        data.append(0x0a)
        return data
    }
}

/// Renders a ``DiffResult`` as text or Markdown.
package struct DiffRenderer: Sendable {
    /// Colours for text, or none.
    package var style: TextStyle
    /// How frame names are shown: simplified (default) or full.
    package var names: FrameNameStyle

    /// Creates a renderer.
    package init(style: TextStyle = .plain, names: FrameNameStyle = .simplified) {
        self.style = style
        self.names = names
    }

    private func row(_ change: FingerprintChange) -> [String] {
        let baseCount = change.base.map { "\($0.count)" } ?? "-"
        let headCount = change.head.map { "\($0.count)" } ?? "-"
        let baseP95 = change.base.map { Durations.format($0.p95Ms) } ?? "-"
        let headP95 = change.head.map { Durations.format($0.p95Ms) } ?? "-"
        var delta = "-"
        if let b = change.base, let h = change.head { delta = Durations.change(from: b.p95Ms, to: h.p95Ms) }
        var kind = change.kind.rawValue
        if change.belowMinimum { kind += "*" }
        return [
            kind, change.fingerprint, baseCount, headCount, baseP95, headP95, delta,
            StackFrameSummary.abbreviated(names.display(change.headline)),
        ]
    }

    private func headline(_ diff: DiffResult) -> String {
        let counts = FingerprintChange.Kind.allCases.map { "\(diff.changes($0).count) \($0.rawValue)" }.joined(
            separator: ", ")
        return
            "base: \(diff.baseStalls) stall\(diff.baseStalls == 1 ? "" : "s") (\(Durations.format(diff.baseTotalMs))), head: \(diff.headStalls) stall\(diff.headStalls == 1 ? "" : "s") (\(Durations.format(diff.headTotalMs))); \(counts)"
    }

    private var footnote: String {
        "* fewer occurrences in head than --min-occurrences"
    }

    /// Aligned text, ending with a newline.
    package func renderText(_ diff: DiffResult) -> String {
        var out = [style.bold(headline(diff))]
        out.append(
            "regression: count or p95 more than \(Int(saturating: (diff.policy.tolerance * 100).rounded()))% above base; min occurrences \(diff.policy.minOccurrences)"
        )
        if diff.changes.isEmpty {
            out.append("")
            out.append("No stalls on either side.")
            return out.joined(separator: "\n") + "\n"
        }
        var table = TextTable(columns: [
            .init("CHANGE"), .init("FINGERPRINT"), .init("BASE", .right), .init("HEAD", .right),
            .init("BASE P95", .right), .init("HEAD P95", .right), .init("P95 Δ", .right), .init("TOP FRAME"),
        ])
        table.rows = diff.changes.map(row)
        out.append("")
        out.append(
            table.render(header: style.bold) { rowIndex, column, text in
                guard column == 0 else { return text }
                switch diff.changes[rowIndex].kind {
                case .new, .regressed: return diff.changes[rowIndex].belowMinimum ? style.yellow(text) : style.red(text)
                case .fixed: return style.green(text)
                case .unchanged: return style.dim(text)
                }
            })
        if diff.changes.contains(where: \.belowMinimum) { out.append(style.dim(footnote)) }
        let regressed = diff.changes(.regressed)
        if !regressed.isEmpty {
            out.append("")
            for change in regressed {
                out.append("regressed \(change.fingerprint): \(change.reasons.joined(separator: ", "))")
            }
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// Markdown, ending with a newline.
    package func renderMarkdown(_ diff: DiffResult) -> String {
        var out = ["## Stall diff", "", headline(diff) + "."]
        if diff.changes.isEmpty {
            out += ["", "No stalls on either side."]
            return out.joined(separator: "\n") + "\n"
        }
        let rows = diff.changes.map { change -> [String] in
            var cells = row(change)
            cells[0] = "**\(cells[0])**"
            cells[1] = Markdown.code(cells[1])
            cells[7] = Markdown.code(cells[7])
            return cells.map { $0.hasPrefix("`") ? $0 : Markdown.cell($0) }
        }
        out.append("")
        out.append(
            Markdown.table(
                ["Change", "Fingerprint", "Base", "Head", "Base p95", "Head p95", "p95 Δ", "Top frame"], rows,
                rightAligned: [2, 3, 4, 5, 6]))
        if diff.changes.contains(where: \.belowMinimum) {
            out.append("")
            out.append("\\" + footnote)
        }
        return out.joined(separator: "\n") + "\n"
    }
}
