import Foundation

/// A plain-text table with aligned columns. Widths count characters of the uncoloured text;
/// colour is applied after padding, so escape sequences never break alignment.
package struct TextTable: Sendable {
    /// Alignment of a column.
    package enum Alignment: Sendable {
        /// Pad on the right.
        case left
        /// Pad on the left (numbers).
        case right
    }

    /// A column: header text and alignment.
    package struct Column: Sendable {
        /// Header text.
        package var header: String
        /// Alignment of the cells.
        package var alignment: Alignment

        /// Creates a column.
        package init(_ header: String, _ alignment: Alignment = .left) {
            self.header = header
            self.alignment = alignment
        }
    }

    /// The columns.
    package var columns: [Column]
    /// The rows: plain cell text, one per column.
    package var rows: [[String]] = []

    /// Creates an empty table.
    package init(columns: [Column]) {
        self.columns = columns
    }

    /// Renders the table; `colorRow` may colour each padded cell (row index, column index, text).
    package func render(
        indent: String = "", header headerStyle: (String) -> String = { $0 },
        color colorCell: (Int, Int, String) -> String = { _, _, text in text }
    ) -> String {
        var widths = columns.map { $0.header.count }
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], cell.count)
            }
        }
        func pad(_ text: String, _ column: Int) -> String {
            let fill = String(repeating: " ", count: max(0, widths[column] - text.count))
            return columns[column].alignment == .left ? text + fill : fill + text
        }
        func line(_ cells: [String]) -> String {
            var text = indent + cells.joined(separator: "  ")
            while text.hasSuffix(" ") { text.removeLast() }
            return text
        }
        var lines = [headerStyle(line(columns.indices.map { pad(columns[$0].header, $0) }))]
        for (rowIndex, row) in rows.enumerated() {
            lines.append(
                line(
                    columns.indices.map { column in
                        colorCell(rowIndex, column, pad(column < row.count ? row[column] : "", column))
                    }))
        }
        return lines.joined(separator: "\n")
    }
}
