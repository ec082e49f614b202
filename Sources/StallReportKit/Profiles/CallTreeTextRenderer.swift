import Foundation

/// Draws a ``CallTree`` as indented text: one line per node with its share of all samples, its
/// sample count and its name, root first, heaviest callee first at every level.
package struct CallTreeTextRenderer: Sendable {
    /// Default share below which nodes are hidden.
    package static let defaultMinPercent = 1.0
    /// Deepest indentation drawn; deeper nodes say their depth instead.
    package static let maxIndent = 40

    /// Colours, or none.
    package var style: TextStyle
    /// Nodes with a smaller share of all samples (in percent) are hidden and counted.
    package var minPercent: Double
    /// How frame names are shown: simplified (default) or full.
    package var names: FrameNameStyle
    /// Width the lines fit in, in characters, or nil for no limit: names are cut with `…` and
    /// the indentation stops earlier (deeper nodes say their depth).
    package var width: Int?

    /// Creates a renderer.
    package init(
        style: TextStyle = .plain, minPercent: Double = CallTreeTextRenderer.defaultMinPercent,
        names: FrameNameStyle = .simplified,
        width: Int? = nil
    ) {
        self.style = style
        self.minPercent = minPercent
        self.names = names
        self.width = width
    }

    /// Deepest indentation drawn at ``width``: ``maxIndent`` levels, fewer on a narrow terminal
    /// so that at least half the line is left for the name.
    var indentLimit: Int {
        guard let width else { return Self.maxIndent }
        return min(Self.maxIndent, max(0, (width / 2 - 16) / 2))
    }

    /// The lines of the tree (without the synthetic root).
    package func render(_ tree: CallTree) -> [String] {
        let total = Double(tree.sampleCount)
        guard total > 0 else { return ["  (no samples)"] }
        var lines: [String] = []
        // Nodes under the share may have been left out of the tree already (counted by their parent).
        var hidden = tree.root.hiddenChildren
        let countWidth = String(tree.sampleCount).count
        // Iterative depth-first walk: stacks can be hundreds of frames deep.
        var pending: [(node: CallTree.Node, depth: Int)] = tree.root.children.reversed().map { ($0, 0) }
        while let (node, depth) = pending.popLast() {
            let percent = Double(node.samples) / total * 100
            if percent < minPercent {
                hidden += 1
                continue
            }
            let share = String(format: "%5.1f%%", percent)
            let count = String(node.samples).leftPadded(to: countWidth)
            let indent = String(repeating: "  ", count: min(depth, indentLimit))
            let deep = depth > indentLimit ? style.dim("[\(depth)] ") : ""
            var name = names.display(node.frame)
            if let width {
                let selfShare = node.selfMs > 0 && node.hasCallees ? 13 : 0
                let used = LineFitting.visibleWidth("  \(share) \(count)  \(indent)\(deep)") + selfShare
                name = StackFrameSummary.abbreviated(name, limit: max(16, width - used))
            }
            if node.frame.inApp {
                name = style.bold(style.cyan(name))
            } else if node.frame.isSynthetic {
                name = style.yellow(name)
            }
            var line = "  \(share) \(count)  \(indent)\(deep)\(name)"
            if node.selfMs > 0, node.hasCallees {
                line += style.dim(String(format: "  (self %.0f%%)", node.selfMs / tree.totalMs * 100))
            }
            lines.append(line)
            hidden += node.hiddenChildren
            pending += node.children.reversed().map { ($0, depth + 1) }
        }
        if hidden > 0 {
            let limit = String(format: "%g", minPercent)
            lines.append(
                style.dim(
                    "  (\(hidden) branch\(hidden == 1 ? "" : "es") with less than \(limit) % of the samples not shown)")
            )
        }
        return lines
    }
}

extension String {
    /// The string padded with spaces on the left to `width` characters.
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
