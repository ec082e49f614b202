import Foundation

/// Small helpers for writing GitHub-flavoured Markdown safely.
package enum Markdown {
    /// Characters escaped with a backslash in running text and cells: table (`|`), link and image
    /// (`[`, `]`), HTML (`<`, `>`) and code (`` ` ``) syntax, and the backslash itself.
    static let special: Set<Character> = ["\\", "|", "[", "]", "<", ">", "`"]

    /// Escapes text for a table cell or running text: control characters visibly
    /// (``PrintableText``, so a newline cannot end the row), then table, link, HTML and code
    /// syntax with backslashes, so report data shows as the text it is.
    package static func cell(_ text: String) -> String {
        let printable = PrintableText.escape(text)
        guard printable.contains(where: special.contains) else { return printable }
        var out = ""
        for character in printable {
            if special.contains(character) { out.append("\\") }
            out.append(character)
        }
        return out
    }

    /// Inline code; backticks inside are replaced, as a code span cannot hold them simply; pipes
    /// are escaped (a table would split the cell) and control characters shown visibly.
    package static func code(_ text: String) -> String {
        "`"
            + PrintableText.escape(text).replacingOccurrences(of: "`", with: "'").replacingOccurrences(
                of: "|", with: "\\|") + "`"
    }

    /// A table from a header row and body rows (cells already escaped).
    package static func table(_ header: [String], _ rows: [[String]], rightAligned: Set<Int> = []) -> String {
        var lines = ["| " + header.joined(separator: " | ") + " |"]
        lines.append(
            "|" + header.indices.map { rightAligned.contains($0) ? " ---: " : " --- " }.joined(separator: "|") + "|")
        for row in rows { lines.append("| " + row.joined(separator: " | ") + " |") }
        return lines.joined(separator: "\n")
    }
}
