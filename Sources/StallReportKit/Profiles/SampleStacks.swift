import Foundation

/// Every sample's stack as indices into one table of frames, all in one array: 4 bytes a frame,
/// whatever the stacks are (a report whose every sample has a stack of its own costs about as
/// much as its file's sample lines). A ``CallTree`` is built from it by sorting sample numbers by
/// their frame at each depth, only under nodes that are shown.
package struct SampleStacks: Sendable {
    private var table: [ProfileFrame] = []
    private var index: [ProfileFrame: Int32] = [:]
    /// The frames of every sample, root first, one sample after another.
    private var frames: [Int32] = []
    /// Where each sample's frames end in ``frames``.
    private var ends: [Int] = []
    private var weights: [Double] = []

    /// No samples.
    package init() {}

    /// The samples of `report`, weighted as its ``StallProfile`` weighs them; the monitor's own
    /// frames left out unless `includingMonitorFrames`.
    package init(report: StallReport, includingMonitorFrames: Bool = false) {
        let weightMs = StallFacts.sampleWeightMs(of: report)
        // Sized once: an array of tens of millions of frame ids that doubles holds both its old
        // and its new storage while it grows (up to three times what it needs).
        var frameCount = 0
        for sample in report.samples { frameCount += sample.frameIndices.count + (sample.asyncCallers?.count ?? 0) + 1 }
        frames.reserveCapacity(frameCount)
        ends.reserveCapacity(report.samples.count)
        weights.reserveCapacity(report.samples.count)
        StallProfile.forEachStack(of: report, includingMonitorFrames: includingMonitorFrames) { _, stack in
            add(stack, weightMs: weightMs)
        }
    }

    /// The samples of `profiles`, one after another, with their own weights.
    package init(profiles: [StallProfile]) {
        for profile in profiles {
            for sample in profile.samples { add(sample.stack, weightMs: sample.weightMs) }
        }
    }

    /// Number of samples.
    package var sampleCount: Int { ends.count }

    /// The frames the stacks are made of; a stack's ids index this table.
    package var frameTable: [ProfileFrame] { table }

    /// The stacks of every sample together, one after another.
    package init(_ all: [SampleStacks]) {
        if all.count == 1 {
            self = all[0]
            return
        }
        for stacks in all { append(stacks) }
    }

    /// The frame ids of sample `sample`, root first (indices into ``frameTable``).
    package func stack(of sample: Int) -> ArraySlice<Int32> {
        frames[(sample == 0 ? 0 : ends[sample - 1])..<ends[sample]]
    }

    /// The weight of sample `sample`, in milliseconds.
    package func weight(of sample: Int) -> Double { weights[sample] }

    /// Adds the samples of `other` after these.
    package mutating func append(_ other: SampleStacks) {
        var ids: [Int32] = []
        ids.reserveCapacity(other.table.count)
        for frame in other.table { ids.append(id(of: frame)) }
        frames.reserveCapacity(frames.count + other.frames.count)
        let offset = frames.count
        for frame in other.frames { frames.append(ids[Int(frame)]) }
        ends += other.ends.map { $0 + offset }
        weights += other.weights
    }

    /// Adds one sample's stack (root first).
    package mutating func add(_ stack: [ProfileFrame], weightMs: Double) {
        for frame in stack { frames.append(id(of: frame)) }
        ends.append(frames.count)
        weights.append(weightMs)
    }

    private mutating func id(of frame: ProfileFrame) -> Int32 {
        if let known = index[frame] { return known }
        let id = Int32(table.count)
        table.append(frame)
        index[frame] = id
        return id
    }

    /// The tree, leaving out nodes with less than `minPercent` of the samples.
    func tree(minPercent: Double) -> CallTree.Node {
        var order = (0..<ends.count).map { Int32($0) }
        let total = Double(ends.count)
        return order.withUnsafeMutableBufferPointer { order in
            node(ProfileFrame(name: "all", isSynthetic: true), order[...], depth: 0) { count in
                Double(count) / total * 100 < minPercent
            }
        }
    }

    private func start(of sample: Int32) -> Int { sample == 0 ? 0 : ends[Int(sample) - 1] }

    /// The frame of `sample` at `depth`, or -1 when its stack ends before.
    private func frame(of sample: Int32, at depth: Int) -> Int32 {
        let at = start(of: sample) + depth
        return at < ends[Int(sample)] ? frames[at] : -1
    }

    /// The node of `frame` whose samples are `samples` (all with the same path down to `depth`).
    private func node(
        _ frame: ProfileFrame, _ samples: Slice<UnsafeMutableBufferPointer<Int32>>, depth: Int,
        hidden: (Int) -> Bool
    ) -> CallTree.Node {
        var samples = samples
        var weight = 0.0
        for sample in samples { weight += weights[Int(sample)] }
        var result = CallTree.Node(frame: frame, weightMs: weight, selfMs: 0, samples: samples.count, children: [])
        samples.sort { self.frame(of: $0, at: depth) < self.frame(of: $1, at: depth) }
        var at = samples.startIndex
        while at < samples.endIndex {
            let callee = self.frame(of: samples[at], at: depth)
            var end = at + 1
            while end < samples.endIndex && self.frame(of: samples[end], at: depth) == callee { end += 1 }
            if callee < 0 {
                for sample in samples[at..<end] { result.selfMs += weights[Int(sample)] }
            } else if hidden(end - at) {
                result.hiddenChildren += 1
            } else {
                result.children.append(node(table[Int(callee)], samples[at..<end], depth: depth + 1, hidden: hidden))
            }
            at = end
        }
        result.children.sort { a, b in
            if a.weightMs != b.weightMs { return a.weightMs > b.weightMs }
            return a.frame.name < b.frame.name
        }
        return result
    }
}
