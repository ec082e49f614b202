import Foundation
import StallReportKit
import Testing

/// The folded export writes its lines from frame ids, without a string per stack: the bytes must
/// be those of the plain way (a string per stack, merged in a dictionary, sorted as strings).
@Suite("Folded lines from frame ids")
struct FoldedLinesTests {
    /// The plain way: one string per sample's stack, merged and sorted as strings.
    static func reference(_ profiles: [StallProfile]) -> String {
        var weights: [String: Double] = [:]
        for profile in profiles {
            for sample in profile.samples {
                let line = sample.stack.map { FoldedExport.clean(FrameNameStyle.simplified.display($0)) }.joined(
                    separator: ";")
                weights[line, default: 0] += sample.weightMs
            }
        }
        var output = ""
        for stack in weights.keys.sorted() {
            let microseconds = Int((weights[stack]! * 1000).rounded())
            if microseconds > 0 { output += "\(stack) \(microseconds)\n" }
        }
        return output
    }

    @Test("random stacks of awkward names give the same bytes as a string per stack", arguments: UInt64(1)...8)
    func sameBytes(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        // Names that are prefixes of others followed by characters before and after ';', a ';'
        // inside a name, an accent and an emoji, equal names of different frames, and a name
        // that is only spaces. (Strings that differ only in composition are not ordered by
        // their spelling-independent form by Swift: see `composedAndDecomposed`.)
        let names = ["a", "a!", "a.b", "a;b", "ab", "a b", "caf\u{E9}", "Z", "\u{1F600}x", "   ", "a\tb"]
        let frames =
            names.enumerated().map { ProfileFrame(name: $1, file: $0 % 2 == 0 ? "/f\($0).swift" : nil) }
            + [ProfileFrame(name: "a", image: "other.so")]
        var profiles: [StallProfile] = []
        for (index, weight) in [12.5, 0.0004, 3.3333].enumerated() {
            var profile = ProfileFixtures.profiles[index % ProfileFixtures.profiles.count]
            profile.samples = (0..<300).map { sample in
                let stack = (0..<Int.random(in: 0...4, using: &random)).map { _ in frames.randomElement(using: &random)!
                }
                return StallProfile.Sample(offsetMs: Double(sample), weightMs: weight, stack: stack)
            }
            profiles.append(profile)
        }
        #expect(Array(FoldedExport.render(profiles).utf8) == Array(Self.reference(profiles).utf8))
    }

    @Test("names that differ only in composition make one line, written composed, wherever they come")
    func composedAndDecomposed() {
        for first in ["caf\u{E9}", "cafe\u{301}"] {
            let second = first == "caf\u{E9}" ? "cafe\u{301}" : "caf\u{E9}"
            var profile = ProfileFixtures.profiles[0]
            profile.samples = [first, "a", second].map {
                StallProfile.Sample(offsetMs: 0, weightMs: 2, stack: [ProfileFrame(name: $0)])
            }
            #expect(Array(FoldedExport.render([profile]).utf8) == Array("a 2000\ncaf\u{E9} 4000\n".utf8))
        }
    }
}
