import Foundation

/// Fits lines of text output into a terminal's width: measures what a terminal shows (colour
/// escape sequences take no room), breaks long lines between list items (after `; ` or `, `,
/// never inside a word), and cuts what still does not fit with `…`, keeping its colours closed.
package enum LineFitting {
    /// Characters of `text` a terminal shows: colour escape sequences do not count.
    package static func visibleWidth(_ text: String) -> Int {
        var width = 0
        var inEscape = false
        for character in text {
            if inEscape {
                if character.isLetter { inEscape = false }
            } else if character == "\u{1B}" {
                inEscape = true
            } else {
                width += 1
            }
        }
        return width
    }

    /// `line` as is when it fits `width`, else broken after the last `; ` or `, ` that fits (without one, before the last ` (`),
    /// the rest on lines starting with `continuation`. A part with no such break that fits stays
    /// longer than `width` (``cut(_:width:)`` shortens it).
    package static func wrapped(_ line: String, width: Int, continuation: String = "  ") -> [String] {
        guard visibleWidth(line) > width else { return [line] }
        var lines: [String] = []
        var rest = line
        while visibleWidth(rest) > width {
            // After `; ` and `, `, or before ` (`: the text kept on the line ends at the
            // separator's first character (dropped for ` (`), which must fit.
            let afterSeparator = ["; ", ", "].flatMap { separator in
                rest.ranges(of: separator).filter { visibleWidth(String(rest[..<$0.lowerBound])) < width }.map(
                    \.upperBound)
            }
            let beforeParenthesis = rest.ranges(of: " (").filter {
                visibleWidth(String(rest[..<$0.lowerBound])) <= width
            }
            .map { rest.index(after: $0.lowerBound) }
            let breaks = afterSeparator.isEmpty ? beforeParenthesis : afterSeparator
            guard let cut = breaks.max(), cut > rest.startIndex,
                visibleWidth(String(rest[..<cut])) > visibleWidth(continuation)
            else { break }
            lines.append(String(rest[..<cut]).replacingOccurrences(of: " +$", with: "", options: .regularExpression))
            rest = continuation + rest[cut...]
        }
        return lines + [rest]
    }

    /// `line` cut to at most `width` visible characters, the last of them `…`, when it is wider;
    /// escape sequences are all kept (so a colour that was switched off still is).
    package static func cut(_ line: String, width: Int) -> String {
        guard visibleWidth(line) > width else { return line }
        let keep = max(0, width - 1)
        var out = ""
        var shown = 0
        var inEscape = false
        var ellipsisAdded = false
        for character in line {
            if inEscape {
                out.append(character)
                if character.isLetter { inEscape = false }
            } else if character == "\u{1B}" {
                out.append(character)
                inEscape = true
            } else if shown < keep {
                out.append(character)
                shown += 1
            } else if !ellipsisAdded {
                if width > 0 { out.append("…") }
                ellipsisAdded = true
            }
        }
        return out
    }

    /// Every line of `text` (split at newlines) wrapped (``wrapped(_:width:continuation:)``)
    /// and then cut (``cut(_:width:)``) to `width`.
    package static func fit(_ text: String, width: Int, continuation: String = "  ") -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).flatMap { line in
            wrapped(String(line), width: width, continuation: continuation).map { cut($0, width: width) }
        }
    }
}

extension LineFitting {
    /// A frame's name and its source location shortened to `width` characters together (with
    /// the two spaces between them); the name comes first. A location that does not fit loses
    /// its directories (`Scenarios.swift:15`, parentheses kept), then is cut in the middle to
    /// what the whole name leaves (at least 12 characters), or is left out when the name alone
    /// fits. A name wider than `width` is cut at its end with `…` (to at least 16 characters) and
    /// shown without its location.
    package static func shortened(name: String, location: String?, width: Int) -> (name: String, location: String?) {
        guard let location else { return (StackFrameSummary.abbreviated(name, limit: max(16, width)), nil) }
        if name.count + 2 + location.count <= width { return (name, location) }
        let short = fileName(location)
        if name.count + 2 + short.count <= width { return (name, short) }
        if name.count + 2 + 12 <= width {
            return (name, StackFrameSummary.middleAbbreviated(short, limit: width - 2 - name.count))
        }
        return (StackFrameSummary.abbreviated(name, limit: max(16, width)), nil)
    }

    /// `location` (`/a/b/File.swift:12`, or the same in parentheses) without its directories.
    static func fileName(_ location: String) -> String {
        guard let slash = location.lastIndex(of: "/") else { return location }
        return (location.hasPrefix("(") ? "(" : "") + location[location.index(after: slash)...]
    }
}
