import Foundation

/// What the flame graph page shows: the merged call tree in a compact form, the frame table and
/// the summary numbers of its header. Encoded as JSON inside the page.
package struct FlameGraphData: Codable, Sendable, Equatable {
    /// One function of the frame table.
    package struct Frame: Codable, Sendable, Equatable {
        /// Function name as shown (simplified unless the data was made with full names).
        package var name: String
        /// The full name when it differs from ``name``: shown on hover.
        package var full: String?
        /// Source file, when known.
        package var file: String?
        /// Image file name, when known.
        package var image: String?
        /// The app's own code.
        package var app: Bool
        /// A synthetic frame (`all`, `[no stack]`, `[syscall …]`).
        package var synthetic: Bool
    }

    /// One node of the tree.
    package struct Node: Codable, Sendable, Equatable {
        /// Index into ``FlameGraphData/frames``.
        package var f: Int
        /// Time through this node, in milliseconds.
        package var w: Double
        /// Samples through this node.
        package var n: Int
        /// Callees, heaviest first; absent for a leaf.
        package var c: [Node]?
    }

    /// Summary numbers for the header.
    package struct Summary: Codable, Sendable, Equatable {
        /// Stalls merged.
        package var stalls: Int
        /// Distinct fingerprints.
        package var fingerprints: Int
        /// Sum of the stalls' durations, in milliseconds.
        package var totalStallMs: Double
        /// Sum of the sample weights (samples × effective interval), in milliseconds.
        package var sampledMs: Double
        /// Samples merged.
        package var samples: Int
        /// Longest stall, in milliseconds.
        package var worstMs: Double
        /// Fingerprint of the longest stall.
        package var worstFingerprint: String?
        /// Start of the first stall (ISO 8601).
        package var firstStart: String?
        /// Start of the last stall (ISO 8601).
        package var lastStart: String?
        /// Stalls per classification.
        package var classifications: [String: Int]
        /// Executables the stalls came from.
        package var executables: [String]
        /// Calls not drawn for their small share of the samples (under ``minPercent`` each);
        /// absent when every call is drawn.
        package var hiddenNodes: Int?
        /// The share of all samples under which a call is not drawn, in percent.
        package var minPercent: Double?
        /// For a flame graph of blocking calls (whose other numbers then count no stall): what
        /// the header says instead.
        package var blockingCalls: BlockingSummary?
    }

    /// The header of a flame graph of blocking calls.
    package struct BlockingSummary: Codable, Sendable, Equatable {
        /// Call sites drawn (one per site and report).
        package var callSites: Int
        /// Distinct call-site fingerprints.
        package var fingerprints: Int
        /// Calls made from them.
        package var calls: Int
        /// Time they blocked, in milliseconds.
        package var blockedMs: Double
        /// The longest call, in milliseconds, and its site's fingerprint.
        package var worstMs: Double
        package var worstFingerprint: String?
    }

    /// Calls with less than this share of all samples (in percent) are not drawn: no screen shows
    /// them, and a report whose every sample has a stack of its own would otherwise put a node per
    /// frame of every sample into the page. Only trees of more than 10,000 samples lose any.
    package static let minPercent = 0.01

    /// Page title.
    package var title: String
    /// Header numbers.
    package var summary: Summary
    /// Frame table.
    package var frames: [Frame]
    /// The tree; the root is the synthetic `all`.
    package var root: Node

    /// The data of the given profiles, frame names shown as `names` says.
    package init(profiles: [StallProfile], title: String, names: FrameNameStyle = .simplified) {
        self.init(stalls: profiles.map(FlameGraphStall.init(profile:)), title: title, names: names)
    }

    /// The data of the call sites of blocking-calls reports (``BlockingCallStacks``), each as wide
    /// as the time its calls blocked.
    package init(blockingCalls reports: [BlockingCallsReport], title: String, names: FrameNameStyle = .simplified) {
        let stacks = BlockingCallStacks.stacks(of: reports)
        let (root, frames, tree, hiddenNodes) = Self.tree(of: stacks, names: names)
        let sites = reports.flatMap(\.callSites)
        let worst = sites.max { $0.maxMs < $1.maxMs }
        self.title = title
        self.root = root
        self.frames = frames
        summary = Summary(
            stalls: 0, fingerprints: 0, totalStallMs: 0, sampledMs: tree.totalMs, samples: tree.sampleCount,
            worstMs: 0, worstFingerprint: nil,
            firstStart: reports.map(\.startedAt).min().map(ReportCoding.formatDate),
            lastStart: reports.map(\.startedAt).max().map(ReportCoding.formatDate), classifications: [:],
            executables: Set(reports.map(\.process.executableName)).sorted(),
            hiddenNodes: hiddenNodes > 0 ? hiddenNodes : nil, minPercent: hiddenNodes > 0 ? Self.minPercent : nil,
            blockingCalls: BlockingSummary(
                callSites: sites.count, fingerprints: Set(sites.map(\.fingerprint)).count,
                calls: sites.map(\.count).reduce(0, +), blockedMs: sites.map(\.totalMs).reduce(0, +),
                worstMs: worst?.maxMs ?? 0, worstFingerprint: worst?.fingerprint))
    }

    /// The drawn tree of `stacks`, its frame table, the call tree and how many calls were not drawn.
    private static func tree(
        of stacks: SampleStacks, names: FrameNameStyle
    ) -> (root: Node, frames: [Frame], tree: CallTree, hiddenNodes: Int) {
        let tree = CallTree(stacks: stacks, minPercent: Self.minPercent)
        var hiddenNodes = 0
        var frames: [Frame] = []
        var index: [ProfileFrame: Int] = [:]
        func convert(_ node: CallTree.Node) -> Node {
            let f: Int
            if let known = index[node.frame] {
                f = known
            } else {
                f = frames.count
                index[node.frame] = f
                let shown = names.display(node.frame)
                frames.append(
                    Frame(
                        name: shown, full: shown == node.frame.name ? nil : node.frame.name, file: node.frame.file,
                        image: node.frame.image, app: node.frame.inApp, synthetic: node.frame.isSynthetic))
            }
            hiddenNodes += node.hiddenChildren
            let children = node.children.map(convert)
            return Node(
                f: f, w: (node.weightMs * 1000).rounded() / 1000, n: node.samples, c: children.isEmpty ? nil : children)
        }
        let root = convert(tree.root)
        return (root, frames, tree, hiddenNodes)
    }

    /// The data of the given stalls, frame names shown as `names` says.
    package init(stalls profiles: [FlameGraphStall], title: String, names: FrameNameStyle = .simplified) {
        self.title = title
        var stacks = SampleStacks()
        for profile in profiles { stacks.append(profile.stacks) }
        let (root, frames, tree, hiddenNodes) = Self.tree(of: stacks, names: names)
        self.root = root
        self.frames = frames
        let worst = profiles.max { $0.durationMs < $1.durationMs }
        var classifications: [String: Int] = [:]
        for profile in profiles { classifications[profile.classification.rawValue, default: 0] += 1 }
        summary = Summary(
            stalls: profiles.count, fingerprints: Set(profiles.map(\.fingerprint)).count,
            totalStallMs: profiles.reduce(0) { $0 + $1.durationMs }, sampledMs: tree.totalMs, samples: tree.sampleCount,
            worstMs: worst?.durationMs ?? 0, worstFingerprint: worst?.fingerprint,
            firstStart: profiles.map(\.startedAt).min().map(ReportCoding.formatDate),
            lastStart: profiles.map(\.startedAt).max().map(ReportCoding.formatDate),
            classifications: classifications, executables: Set(profiles.map(\.executableName)).sorted(),
            hiddenNodes: hiddenNodes > 0 ? hiddenNodes : nil, minPercent: hiddenNodes > 0 ? Self.minPercent : nil)
    }
}
