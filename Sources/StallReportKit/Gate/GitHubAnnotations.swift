import Foundation

/// GitHub Actions workflow commands (`::error`, `::warning`, `::notice`) for a gate result.
///
/// GitHub shows at most 10 error and 10 warning annotations per step (and 10 notices); extra
/// ones are dropped silently. So at most 10 of each are written, and when any are left out one
/// final `::notice` says how many, with a pointer to the log. Annotations point at the source
/// line of the stall's top app frame when that file lies inside the workspace.
package struct GitHubAnnotations: Sendable {
    /// GitHub's per-step limit for each annotation level.
    package static let limitPerLevel = 10

    /// The workspace root, to turn absolute source paths into repository-relative ones.
    package var workspace: String?
    /// How frame names are shown: simplified (default) or full.
    package var names: FrameNameStyle

    /// Creates an annotation writer.
    package init(workspace: String?, names: FrameNameStyle = .simplified) {
        self.workspace = workspace
        self.names = names
    }

    /// One annotation.
    package struct Annotation: Sendable, Equatable {
        /// `error`, `warning` or `notice`.
        package var level: String
        /// Short title.
        package var title: String
        /// Message (may span lines).
        package var message: String
        /// Repository-relative file, when known.
        package var file: String?
        /// Line in the file, when known.
        package var line: Int?
    }

    /// Every annotation the result calls for, before capping.
    package func annotations(for result: GateResult) -> [Annotation] {
        var list: [Annotation] = []
        for check in result.failedChecks {
            let offenders = check.offenders.prefix(5).map {
                "\($0.fingerprint) (\(check.kind.format(check.value(of: $0)))) \(names.display($0.headline))"
            }
            var message = "\(check.verdictLine)"
            if !offenders.isEmpty { message += "\n" + offenders.joined(separator: "\n") }
            if check.offenders.count > 5 { message += "\n… and \(check.offenders.count - 5) more" }
            let location = check.offenders.first.flatMap(sourceLocation)
            list.append(
                Annotation(
                    level: "error", title: "Stall budget \(check.kind.rawValue) violated", message: message,
                    file: location?.0, line: location?.1))
        }
        for check in result.failedBlockingChecks {
            let offenders = check.offenders.prefix(5).map {
                "\($0.fingerprint) (\(Durations.format($0.totalMs))) \(BlockingBudgetCheck.describe($0, names: names))"
            }
            var message = check.verdictLine + "\n" + offenders.joined(separator: "\n")
            if check.offenders.count > 5 { message += "\n… and \(check.offenders.count - 5) more" }
            list.append(
                Annotation(
                    level: "error", title: "Blocking-call budget \(check.kind.rawValue) violated", message: message))
        }
        for change in result.blockingChanges ?? [] where change.kind == .new || change.kind == .regressed {
            let what =
                change.kind == .new
                ? "New blocking call site \(change.fingerprint): \(change.head?.count ?? 0) call(s)"
                : "Regressed blocking call site \(change.fingerprint): \(change.reasons.joined(separator: ", "))"
            list.append(
                Annotation(
                    level: change.belowMinimum ? "warning" : "error",
                    title: change.kind == .new ? "New blocking call" : "Regressed blocking call",
                    message: "\(what)\n\(change.headline)"))
        }
        let groups = Dictionary(uniqueKeysWithValues: result.counted.map { ($0.fingerprint, $0) })
        for change in result.changes ?? [] where change.kind == .new || change.kind == .regressed {
            let what =
                change.kind == .new
                ? "New stall \(change.fingerprint): \(change.head?.count ?? 0) occurrence(s), p95 \(Durations.format(change.head?.p95Ms ?? 0))"
                : "Regressed stall \(change.fingerprint): \(change.reasons.joined(separator: ", "))"
            let location = groups[change.fingerprint].flatMap(sourceLocation)
            let level = change.belowMinimum ? "warning" : "error"
            let suffix = change.belowMinimum ? "\n(below the minimum occurrences: not failing)" : ""
            let stall = Self.stallNoun(loop: groups[change.fingerprint]?.worst.loop)
            list.append(
                Annotation(
                    level: level, title: "\(change.kind == .new ? "New" : "Regressed") \(stall)",
                    message: "\(what)\nat \(names.display(change.headline))\(suffix)", file: location?.0,
                    line: location?.1))
        }
        for match in result.expired where match.group != nil {
            list.append(
                Annotation(
                    level: "warning", title: "Stall suppression expired",
                    message:
                        "Suppression of \(match.suppression.fingerprint) expired \(match.suppression.expires) (\(match.suppression.reason)); its \(match.group!.count) stall(s) count again"
                ))
        }
        for problem in result.problems {
            list.append(
                Annotation(
                    level: "warning", title: "Unusable stall report", message: problem.description))
        }
        for change in result.fixed {
            list.append(
                Annotation(
                    level: "notice", title: "Stall fixed",
                    message:
                        "\(change.fingerprint) \(names.display(change.headline)) is in the baseline but did not occur"))
        }
        return list
    }

    /// The workflow-command lines to print on stdout, capped per level, plus one summary line
    /// when annotations were left out.
    package func render(_ result: GateResult) -> String {
        let all = annotations(for: result)
        var shown: [String: Int] = [:]
        var dropped: [String: Int] = [:]
        var lines: [String] = []
        let anyDropped = ["error", "warning", "notice"].contains { level in
            all.filter { $0.level == level }.count > Self.limitPerLevel
        }
        for annotation in all {
            // Keep one notice slot free for the summary line when something is dropped.
            let limit = annotation.level == "notice" && anyDropped ? Self.limitPerLevel - 1 : Self.limitPerLevel
            if shown[annotation.level, default: 0] < limit {
                shown[annotation.level, default: 0] += 1
                lines.append(command(annotation))
            } else {
                dropped[annotation.level, default: 0] += 1
            }
        }
        if !dropped.isEmpty {
            let parts = ["error", "warning", "notice"].compactMap { level in
                dropped[level].map { "\($0) more \(level)\($0 == 1 ? "" : "s")" }
            }
            lines.append(
                command(
                    Annotation(
                        level: "notice", title: "stallreport",
                        message:
                            "\(parts.joined(separator: ", ")) not shown as annotations (GitHub shows at most \(Self.limitPerLevel) per level per step); see the log of this step"
                    )))
        }
        return lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n"
    }

    /// `main-thread stall` for a RunLoop (or unknown) loop, else `stall` with the loop's kind
    /// (`nio stall`, `mainQueue stall`): `loop` is a record's `"<kind> <thread name>"`.
    static func stallNoun(loop: String?) -> String {
        guard let kind = loop?.split(separator: " ").first, !kind.isEmpty, kind != "runLoop" else {
            return "main-thread stall"
        }
        return "\(kind) stall"
    }

    /// One `::level file=…,line=…,title=…::message` line.
    package func command(_ annotation: Annotation) -> String {
        var properties: [String] = []
        if let file = annotation.file {
            properties.append("file=\(Self.escapeProperty(file))")
            if let line = annotation.line { properties.append("line=\(line)") }
        }
        properties.append("title=\(Self.escapeProperty(annotation.title))")
        return "::\(annotation.level) \(properties.joined(separator: ","))::\(Self.escapeData(annotation.message))"
    }

    /// Escapes a message: `%`, CR and LF as GitHub decodes them, every other control character
    /// visibly (``PrintableText``), so nothing in it can end the command or drive the log viewer.
    package static func escapeData(_ text: String) -> String {
        PrintableText.escape(
            text.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "\r", with: "%0D")
                .replacingOccurrences(of: "\n", with: "%0A"))
    }

    /// Escapes a property value: as a message, plus `:` and `,`.
    package static func escapeProperty(_ text: String) -> String {
        escapeData(text).replacingOccurrences(of: ":", with: "%3A").replacingOccurrences(of: ",", with: "%2C")
    }

    /// The repository-relative file and line of the group's top app frame, when inside the workspace.
    private func sourceLocation(_ group: FingerprintStats) -> (String, Int?)? {
        guard let workspace, !workspace.isEmpty,
            let frame = group.worst.stack.first(where: { $0.inApp && $0.file != nil }), let file = frame.file
        else { return nil }
        let root = workspace.hasSuffix("/") ? workspace : workspace + "/"
        if file.hasPrefix(root) { return (String(file.dropFirst(root.count)), frame.line) }
        if !file.hasPrefix("/") { return (file, frame.line) }
        return nil
    }
}
