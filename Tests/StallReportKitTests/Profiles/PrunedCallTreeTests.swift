import Foundation
import StallReportKit
import Testing

/// Call trees that leave out nodes under a share of the samples: the same text as the full tree,
/// and a flame graph of a report whose every sample has a stack of its own stays small.
@Suite("Call trees without their smallest nodes")
struct PrunedCallTreeTests {
    /// Profiles with `samples` random stacks over `pool` frames, of depth 0 to `maxDepth`, and
    /// weights that differ per profile.
    static func randomProfiles(seed: UInt64, samples: Int, pool: Int, maxDepth: Int) -> [StallProfile] {
        var random = SplitMix64(seed: seed)
        let frames = (0..<pool).map { ProfileFrame(name: "Module.function\($0)()", inApp: $0 % 3 == 0) }
        var profiles: [StallProfile] = []
        for (index, weight) in [12.5, 10, 3.25].enumerated() {
            var profile = ProfileFixtures.profiles[index % ProfileFixtures.profiles.count]
            profile.samples = (0..<samples / 3).map { sample in
                // Shallow frames from a few, deeper ones from all: shared prefixes and distinct tails.
                let depth = Int.random(in: 0...maxDepth, using: &random)
                let stack = (0..<depth).map { level in
                    frames[Int.random(in: 0..<(level < 2 ? 4 : pool), using: &random)]
                }
                return StallProfile.Sample(offsetMs: Double(sample) * weight, weightMs: weight, stack: stack)
            }
            profiles.append(profile)
        }
        return profiles
    }

    @Test(
        "the text of a tree built without small nodes is the text of the full tree",
        arguments: [0.0, 0.5, 1, 5, 15, 40])
    func sameText(minPercent: Double) {
        for seed in UInt64(1)...6 {
            let profiles = Self.randomProfiles(seed: seed, samples: 900, pool: 40, maxDepth: 8)
            let renderer = CallTreeTextRenderer(minPercent: minPercent)
            let full = renderer.render(CallTree(profiles: profiles))
            let pruned = renderer.render(CallTree(profiles: profiles, minPercent: minPercent))
            #expect(pruned == full, "seed \(seed), \(minPercent) %")
        }
    }

    @Test("a tree counts the callees it leaves out, and keeps every sample's weight in its totals")
    func hiddenCallees() {
        let profiles = Self.randomProfiles(seed: 42, samples: 3_000, pool: 500, maxDepth: 6)
        let full = CallTree(profiles: profiles)
        let pruned = CallTree(profiles: profiles, minPercent: 1)
        #expect(pruned.sampleCount == full.sampleCount && pruned.totalMs == full.totalMs)
        #expect(pruned.root.hiddenChildren == 0)  // the first two levels come from 4 frames
        var hidden = 0
        var nodes = 0
        var pending = [pruned.root]
        while let node = pending.popLast() {
            nodes += 1
            hidden += node.hiddenChildren
            #expect(node.children.reduce(0) { $0 + $1.samples } <= node.samples)
            #expect(node.children.allSatisfy { Double($0.samples) / Double(pruned.sampleCount) * 100 >= 1 })
            pending += node.children
        }
        #expect(hidden > 0 && nodes < 200, "\(nodes) nodes, \(hidden) hidden")
    }

    @Test("a flame graph of 30,000 samples with stacks of their own draws only calls of 0.01 % or more, and says so")
    func flameGraphOfDistinctStacks() throws {
        let profiles = Self.randomProfiles(seed: 7, samples: 30_000, pool: 5_000, maxDepth: 12)
        let data = FlameGraphData(profiles: profiles, title: "t")
        #expect(data.summary.samples == 30_000)
        let hidden = try #require(data.summary.hiddenNodes)
        #expect(hidden > 10_000)
        #expect(data.summary.minPercent == FlameGraphData.minPercent)
        var nodes = 0
        var pending = [data.root]
        while let node = pending.popLast() {
            nodes += 1
            #expect(Double(node.n) / 30_000 * 100 >= FlameGraphData.minPercent)
            pending += node.c ?? []
        }
        #expect(nodes < 5_000, "\(nodes) nodes drawn")
        let page = try FlameGraphHTML.render(profiles, title: "t")
        #expect(page.contains("\"hiddenNodes\":\(hidden)"))
    }

    @Test("a flame graph of few samples draws every call")
    func smallFlameGraph() {
        let data = FlameGraphData(profiles: ProfileFixtures.profiles, title: "t")
        #expect(data.summary.hiddenNodes == nil && data.summary.minPercent == nil)
    }
}
