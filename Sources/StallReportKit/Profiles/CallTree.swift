import Foundation

/// The samples of one or more stalls merged into a tree of calls, root at the top.
///
/// Each node is a frame reached by one path from the root; its weight is the time of every sample
/// whose stack passes through it, its self weight the time of samples that end in it. Children are
/// sorted heaviest first (then by name), so the first path from the root is the heaviest one.
package struct CallTree: Sendable {
    /// One node of the tree.
    package struct Node: Sendable {
        /// The frame; the root node has a synthetic frame named `all`.
        package var frame: ProfileFrame
        /// Time of the samples that pass through this node, in milliseconds.
        package var weightMs: Double
        /// Time of the samples that end in this node, in milliseconds.
        package var selfMs: Double
        /// Number of samples that pass through this node.
        package var samples: Int
        /// Callees, heaviest first.
        package var children: [Node]
    }

    /// The root: every sample passes through it.
    package private(set) var root: Node

    /// Builds the tree of the given profiles' samples.
    package init(profiles: [StallProfile]) {
        let builder = Builder()
        for profile in profiles {
            for sample in profile.samples {
                builder.add(sample.stack, weightMs: sample.weightMs)
            }
        }
        root = builder.finish()
    }

    /// Builds the tree of one report's samples, weighted as its ``StallProfile`` weighs them,
    /// without keeping the profile's stacks.
    package init(report: StallReport) {
        let builder = Builder()
        let weightMs = StallFacts.sampleWeightMs(of: report)
        StallProfile.forEachStack(of: report) { _, stack in builder.add(stack, weightMs: weightMs) }
        root = builder.finish()
    }

    /// Total time of all samples, in milliseconds.
    package var totalMs: Double { root.weightMs }

    /// Number of samples.
    package var sampleCount: Int { root.samples }

    /// Mutable nodes with children indexed by frame, turned into sorted value nodes at the end.
    private final class Builder {
        final class MutableNode {
            let frame: ProfileFrame
            var weightMs = 0.0
            var selfMs = 0.0
            var samples = 0
            var children: [ProfileFrame: MutableNode] = [:]
            init(frame: ProfileFrame) { self.frame = frame }
        }

        let root = MutableNode(frame: ProfileFrame(name: "all", isSynthetic: true))

        func add(_ stack: [ProfileFrame], weightMs: Double) {
            var node = root
            node.weightMs += weightMs
            node.samples += 1
            for frame in stack {
                let child: MutableNode
                if let existing = node.children[frame] {
                    child = existing
                } else {
                    child = MutableNode(frame: frame)
                    node.children[frame] = child
                }
                child.weightMs += weightMs
                child.samples += 1
                node = child
            }
            node.selfMs += weightMs
        }

        func finish() -> Node { freeze(root) }

        private func freeze(_ node: MutableNode) -> Node {
            let children = node.children.values.map(freeze).sorted { a, b in
                if a.weightMs != b.weightMs { return a.weightMs > b.weightMs }
                return a.frame.name < b.frame.name
            }
            return Node(frame: node.frame, weightMs: node.weightMs, selfMs: node.selfMs, samples: node.samples, children: children)
        }
    }
}
