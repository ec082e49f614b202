import Foundation

/// Small helpers for writing GitHub-flavoured Markdown safely.
package enum Markdown {
    /// Escapes text for a table cell: pipes and newlines would break the row.
    package static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }

    /// Inline code; backticks inside are replaced, as a code span cannot hold them simply.
    package static func code(_ text: String) -> String {
        "`" + text.replacingOccurrences(of: "`", with: "'").replacingOccurrences(of: "|", with: "\\|") + "`"
    }

    /// A table from a header row and body rows (cells already escaped).
    package static func table(_ header: [String], _ rows: [[String]], rightAligned: Set<Int> = []) -> String {
        var lines = ["| " + header.joined(separator: " | ") + " |"]
        lines.append("|" + header.indices.map { rightAligned.contains($0) ? " ---: " : " --- " }.joined(separator: "|") + "|")
        for row in rows { lines.append("| " + row.joined(separator: " | ") + " |") }
        return lines.joined(separator: "\n")
    }
}
