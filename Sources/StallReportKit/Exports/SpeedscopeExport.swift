import Foundation

/// speedscope's JSON file format (https://www.speedscope.app/file-format-schema.json).
///
/// The given stalls are **merged into one `sampled` profile**, so speedscope's Left Heavy and
/// Sandwich views show where the stalled time went across all of them, and its Time Order view
/// shows the stalls one after the other, oldest first. Weights are milliseconds (each sample
/// weighs the report's effective sampling interval); consecutive samples of one stall with the
/// same stack are merged into one sample carrying their summed weight. Stacks are root first.
public enum SpeedscopeExport {
    /// The `$schema` value speedscope recognises.
    package static let schemaURL = "https://www.speedscope.app/file-format-schema.json"

    /// The top-level file.
    package struct File: Codable, Sendable, Equatable {
        /// Always ``SpeedscopeExport/schemaURL``.
        package var schema: String
        /// Frames shared by the profiles.
        package var shared: Shared
        /// The profiles (one, merged).
        package var profiles: [Profile]
        /// Name of the profile group.
        package var name: String
        /// Profile shown first.
        package var activeProfileIndex: Int
        /// The tool that wrote the file.
        package var exporter: String

        enum CodingKeys: String, CodingKey {
            case schema = "$schema"
            case shared, profiles, name, activeProfileIndex, exporter
        }
    }

    /// The shared frame table.
    package struct Shared: Codable, Sendable, Equatable {
        /// Frames referenced by index from the samples.
        package var frames: [Frame]
    }

    /// One frame.
    package struct Frame: Codable, Sendable, Equatable {
        /// Function name.
        package var name: String
        /// Source file, when known.
        package var file: String?
    }

    /// A `sampled` profile.
    package struct Profile: Codable, Sendable, Equatable {
        /// Always `sampled`.
        package var type: String
        /// Profile name.
        package var name: String
        /// Unit of the weights: `milliseconds`.
        package var unit: String
        /// Start of the profile (0).
        package var startValue: Double
        /// End of the profile: the sum of the weights.
        package var endValue: Double
        /// Stacks as indices into the shared frames, root first.
        package var samples: [[Int]]
        /// Weight of each stack, same length as ``samples``.
        package var weights: [Double]
    }

    /// The speedscope file of the given profiles (in the order given).
    package static func make(
        _ profiles: [StallProfile], name: String, exporter: String, names: FrameNameStyle = .simplified
    ) -> File {
        var frames: [Frame] = []
        var index: [ProfileFrame: Int] = [:]
        var samples: [[Int]] = []
        var weights: [Double] = []
        // Equal stacks share one index array (up to a bound): a stall's samples repeat few stacks.
        var mapped: [[ProfileFrame]: [Int]] = [:]
        for profile in profiles {
            var previous: [Int]?
            for sample in profile.samples {
                let stack: [Int]
                if let known = mapped[sample.stack] {
                    stack = known
                } else {
                    stack = sample.stack.map { frame -> Int in
                        if let known = index[frame] { return known }
                        index[frame] = frames.count
                        frames.append(Frame(name: names.display(frame), file: frame.file))
                        return frames.count - 1
                    }
                    if mapped.count < 4096 { mapped[sample.stack] = stack }
                }
                if stack == previous {
                    weights[weights.count - 1] += sample.weightMs
                } else {
                    samples.append(stack)
                    weights.append(sample.weightMs)
                    previous = stack
                }
            }
        }
        let total = weights.reduce(0, +)
        let stalls = "\(profiles.count) stall\(profiles.count == 1 ? "" : "s")"
        let profile = Profile(
            type: "sampled", name: "\(name) (\(stalls), merged)", unit: "milliseconds", startValue: 0,
            endValue: total, samples: samples, weights: weights)
        return File(
            schema: schemaURL, shared: Shared(frames: frames), profiles: [profile], name: name,
            activeProfileIndex: 0, exporter: exporter)
    }

    /// The file as JSON.
    public static func render(
        _ profiles: [StallProfile], name: String, exporter: String, names: FrameNameStyle = .simplified
    ) throws -> Data {
        try render(stalls: profiles.map { SampleStacks(profiles: [$0]) }, name: name, exporter: exporter, names: names)
    }

    /// The file as JSON, from each stall's stacks in order (``SampleStacks``, read down to them as
    /// the reports were read): what ``make(_:name:exporter:names:)`` makes, encoded.
    ///
    /// The stacks are written here as they are met, not by `JSONEncoder` (whose tree of a million
    /// stacks took gigabytes) and without an array per stack: the file is encoded with no stacks
    /// and they are put in place of the `[]`.
    package static func render(
        stalls: [SampleStacks], name: String, exporter: String, names: FrameNameStyle = .simplified
    ) throws -> Data {
        var frames: [Frame] = []
        var index: [ProfileFrame: Int] = [:]
        var weights: [Double] = []
        var text = Data(#""samples":["#.utf8)
        for stacks in stalls {
            // Each stall's frame ids, as indices into the shared frames once met.
            var shared = [Int](repeating: -1, count: stacks.frameTable.count)
            var previous: ArraySlice<Int32>?
            for sample in 0..<stacks.sampleCount {
                let stack = stacks.stack(of: sample)
                // Consecutive samples of one stall with the same stack are one, their weights summed.
                if let previous, previous == stack {
                    weights[weights.count - 1] += stacks.weight(of: sample)
                    continue
                }
                previous = stack
                if !weights.isEmpty { text.append(UInt8(ascii: ",")) }
                text.append(UInt8(ascii: "["))
                for (position, local) in stack.enumerated() {
                    if shared[Int(local)] < 0 {
                        let frame = stacks.frameTable[Int(local)]
                        if let known = index[frame] {
                            shared[Int(local)] = known
                        } else {
                            index[frame] = frames.count
                            shared[Int(local)] = frames.count
                            frames.append(Frame(name: names.display(frame), file: frame.file))
                        }
                    }
                    if position > 0 { text.append(UInt8(ascii: ",")) }
                    text.append(contentsOf: String(shared[Int(local)]).utf8)
                }
                text.append(UInt8(ascii: "]"))
                weights.append(stacks.weight(of: sample))
            }
        }
        text.append(UInt8(ascii: "]"))
        let total = weights.reduce(0, +)
        let count = "\(stalls.count) stall\(stalls.count == 1 ? "" : "s")"
        let profile = Profile(
            type: "sampled", name: "\(name) (\(count), merged)", unit: "milliseconds", startValue: 0,
            endValue: total, samples: [], weights: weights)
        let file = File(
            schema: schemaURL, shared: Shared(frames: frames), profiles: [profile], name: name,
            activeProfileIndex: 0, exporter: exporter)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(file)
        // Inside a JSON string a quote is escaped, so `"samples":[]` is only ever the key.
        guard let range = data.range(of: Data(#""samples":[]"#.utf8)) else { throw SpliceError() }
        data.replaceSubrange(range, with: text)
        return data
    }

    /// The encoded file had no place for the stacks (cannot happen: its profiles have the key).
    struct SpliceError: Error {}
}
