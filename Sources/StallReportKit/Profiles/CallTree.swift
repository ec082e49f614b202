import Foundation

/// The samples of one or more stalls merged into a tree of calls, root at the top.
///
/// Each node is a frame reached by one path from the root; its weight is the time of every sample
/// whose stack passes through it, its self weight the time of samples that end in it. Children are
/// sorted heaviest first (then by name), so the first path from the root is the heaviest one.
///
/// A tree can leave out the nodes with less than a share of all samples (``init(report:minPercent:)``):
/// their parent counts them in ``Node/hiddenChildren`` and nothing below them is built. A report
/// whose every sample has a stack of its own would otherwise make a node per frame of every
/// sample, far more than anyone can read.
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
        /// Callees left out for their small share of the samples.
        package var hiddenChildren = 0

        /// Whether any sample goes on from this node into a callee (shown or not).
        package var hasCallees: Bool { !children.isEmpty || hiddenChildren > 0 }
    }

    /// The root: every sample passes through it.
    package private(set) var root: Node

    /// Builds the tree of the given profiles' samples; nodes with less than `minPercent` of all
    /// samples are left out (0: none).
    package init(profiles: [StallProfile], minPercent: Double = 0) {
        root = SampleStacks(profiles: profiles).tree(minPercent: minPercent)
    }

    /// Builds the tree of collected stacks; nodes with less than `minPercent` of all samples are
    /// left out (0: none).
    package init(stacks: SampleStacks, minPercent: Double = 0) {
        root = stacks.tree(minPercent: minPercent)
    }

    /// Builds the tree of one report's samples, weighted as its ``StallProfile`` weighs them,
    /// without keeping the profile's stacks; nodes with less than `minPercent` of all samples are
    /// left out (0: none).
    package init(report: StallReport, minPercent: Double = 0) {
        root = SampleStacks(report: report).tree(minPercent: minPercent)
    }

    /// Total time of all samples, in milliseconds.
    package var totalMs: Double { root.weightMs }

    /// Number of samples.
    package var sampleCount: Int { root.samples }
}
