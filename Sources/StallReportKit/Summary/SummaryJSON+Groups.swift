import Foundation

extension SummaryJSON {
    /// One scene (`--group-by scene`) or loop (`--group-by loop`): its own keys (``SceneKey``,
    /// ``LoopKey``), its distinct fingerprints and the worst one, and the same ``GroupJSON``
    /// numbers as a fingerprint group, all in one object. The keys and numbers read as its own
    /// properties (`scene.scene`, `loop.thread`, `scene.count` …).
    @dynamicMemberLookup
    package struct KeyedGroupJSON<Key: GroupKeyJSON>: GroupNumbersJSON, Codable, Sendable, Equatable {
        /// The group's own keys, encoded inline.
        package var key: Key
        /// Distinct fingerprints among the group's stalls.
        package var fingerprints: Int
        /// Fingerprint of the longest stall.
        package var worstFingerprint: String
        /// The group's numbers, encoded inline.
        package var numbers: GroupJSON

        /// Creates the JSON form of a group whose key (scene, or loop kind and thread) is `stats.fingerprint`.
        package init(_ stats: FingerprintStats, rates: StallRates? = nil) {
            key = Key(groupKey: stats.fingerprint)
            fingerprints = stats.distinctFingerprints
            worstFingerprint = stats.worst.fingerprint
            numbers = GroupJSON(stats, rates: rates)
        }

        /// One of the group's own keys, as if it were a property of this type.
        package subscript<Value>(dynamicMember keyPath: KeyPath<Key, Value>) -> Value { key[keyPath: keyPath] }

        private enum CodingKeys: String, CodingKey {
            case fingerprints, worstFingerprint
        }

        /// Decodes the keys, the fingerprints and the numbers from the same object.
        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            key = try Key(from: decoder)
            fingerprints = try container.decode(Int.self, forKey: .fingerprints)
            worstFingerprint = try container.decode(String.self, forKey: .worstFingerprint)
            numbers = try GroupJSON(from: decoder)
        }

        /// Encodes the keys, the fingerprints and the numbers into one object.
        package func encode(to encoder: any Encoder) throws {
            try numbers.encode(to: encoder)
            try key.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(fingerprints, forKey: .fingerprints)
            try container.encode(worstFingerprint, forKey: .worstFingerprint)
        }
    }

    /// The key of a scene group: the scene; absent for the group of stalls without a scene.
    package struct SceneKey: GroupKeyJSON {
        /// The scene; absent for the group of stalls without a scene.
        package var scene: String?

        /// The key of the scene group `groupKey` (empty for no scene).
        package init(groupKey: String) {
            scene = groupKey.isEmpty ? nil : groupKey
        }
    }

    /// The key of a loop group: the loop's kind and thread.
    package struct LoopKey: GroupKeyJSON {
        /// The loop kind (`runLoop`, `nioEventLoop`, `mainActor`); absent when unknown.
        package var kind: String?
        /// The loop's thread name (`NIO-ELT-0-#1`); absent when unknown.
        package var thread: String?

        /// The key of the loop group `groupKey` (`<kind> <thread>`).
        package init(groupKey: String) {
            let parts = groupKey.split(separator: " ", maxSplits: 1).map(String.init)
            kind = parts.first
            thread = parts.count > 1 ? parts[1] : nil
        }
    }

    /// One scene with `--group-by scene`.
    package typealias SceneJSON = KeyedGroupJSON<SceneKey>
    /// One loop with `--group-by loop`.
    package typealias LoopJSON = KeyedGroupJSON<LoopKey>
}

/// The own keys of a scene or loop group in the summary JSON (see ``SummaryJSON/KeyedGroupJSON``).
package protocol GroupKeyJSON: Codable, Sendable, Equatable {
    /// The keys of the group whose grouping key is `groupKey`.
    init(groupKey: String)
}
