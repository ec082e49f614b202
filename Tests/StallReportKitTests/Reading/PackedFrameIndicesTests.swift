import Foundation
import StallReportKitTestSupport
import Testing

@testable import StallReportKit
@testable import StallReportModel

/// ``LargeReportDecoder`` reads every sample's frame indices into one shared buffer of 4-byte
/// ids (`FrameIndices`): what the subcommands make of the report is what they make of the
/// ordinary decoder's report, whose samples each have an array of their own.
@Suite("Frame indices in a shared buffer")
struct PackedFrameIndicesTests {
    /// Samples of a stall: `distinct` of them with a stack of their own (a deterministic walk of
    /// the frame table), then stacks repeated from a few, with syscall, `none` and async-caller
    /// samples among them.
    static func samples(frameCount: Int, distinct: Int, repeated: Int) -> [[String: Any]] {
        var state: UInt64 = 0x9e37_79b9_7f4a_7c15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let own = (0..<distinct).map { _ in (0..<(1 + next(12))).map { _ in next(frameCount) } }
        let few = [[0, 1, 2], [3, 1, 2], [], [4]]
        return (0..<(distinct + repeated)).map { index in
            let frames = index < distinct ? own[index] : few[index % few.count]
            var sample: [String: Any] = [
                "offsetMs": Double(index) * 10, "kind": ["stack", "stack", "syscall", "none"][index % 4],
                "threadState": "R", "frames": frames,
            ]
            if index % 4 == 2 { sample["syscall"] = "futex" }
            if index % 10 == 1 {
                sample["asyncCallers"] = [frameCount - 1, 0]
                sample["asyncJobFrames"] = 1
            }
            return sample
        }
    }

    @Test("Stacks, call tree, folded lines, pprof samples and encoded bytes are those of the ordinary decoder's arrays")
    func sameStacks() throws {
        let data = try LargeReportDecoderTests.json(
            samples: Self.samples(frameCount: 5, distinct: 3_000, repeated: 3_000))
        let ordinary = try StallReport.decode(from: data)
        let packed = try #require(LargeReportDecoder.decode(data, depthLimit: 64, minimumSize: 0))
        #expect(ordinary.samples.allSatisfy { $0.frameIndices.shared == nil })
        #expect(packed.samples.allSatisfy { $0.frameIndices.shared != nil })
        #expect(packed.samples.map(\.frames) == ordinary.samples.map(\.frames))
        #expect(packed == ordinary)

        let path = "report.json"
        #expect(StallProfile(report: packed, path: path).samples == StallProfile(report: ordinary, path: path).samples)
        var packedStacks: [[ProfileFrame]] = []
        StallProfile.forEachStack(of: packed) { _, stack in packedStacks.append(stack) }
        var ordinaryStacks: [[ProfileFrame]] = []
        StallProfile.forEachStack(of: ordinary) { _, stack in ordinaryStacks.append(stack) }
        #expect(packedStacks == ordinaryStacks)
        #expect(packedStacks.contains { $0.count > 3 }, "the distinct stacks are there")

        let tree = CallTreeTextRenderer(minPercent: 0)
        #expect(
            tree.render(CallTree(report: packed, minPercent: 0))
                == tree.render(CallTree(report: ordinary, minPercent: 0)))
        #expect(
            FoldedExport.render(SampleStacks(report: packed), names: .full)
                == FoldedExport.render(SampleStacks(report: ordinary), names: .full))
        #expect(PprofStall(report: packed, path: path).samples == PprofStall(report: ordinary, path: path).samples)
        #expect(try packed.encoded() == ordinary.encoded())
        #expect(try packed.encoded(pretty: false) == ordinary.encoded(pretty: false))
    }

    @Test("Equal stacks take one range of the one buffer; a sample's frames set anew are its own")
    func sharing() throws {
        let data = try LargeReportDecoderTests.json(samples: Self.samples(frameCount: 5, distinct: 50, repeated: 400))
        var report = try #require(LargeReportDecoder.decode(data, depthLimit: 64, minimumSize: 0))
        let shared = report.samples.compactMap(\.frameIndices.shared)
        #expect(shared.count == report.samples.count)
        #expect(Set(shared.map { ObjectIdentifier($0.buffer) }).count == 1)
        // The repeated stacks (from sample 50 on, four of them) add nothing to the buffer.
        let ranges = Set(shared[50...].map { [$0.range.lowerBound, $0.range.upperBound] })
        #expect(ranges.count == 4)
        #expect(shared[54].range == shared[50].range)

        let before = report.samples[51].frames
        report.samples[50].frames = [4, 4]
        #expect(report.samples[50].frameIndices.shared == nil)
        #expect(report.samples[50].frames == [4, 4])
        #expect(report.samples[54].frames == report.samples[58].frames)
        #expect(report.samples[51].frames == before)
        // Packed indices equal and hash as an array of the same indices.
        #expect(report.samples[51].frameIndices == FrameIndices(before))
        #expect(report.samples[51].frameIndices.hashValue == FrameIndices(before).hashValue)
    }
}
