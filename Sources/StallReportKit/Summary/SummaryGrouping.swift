/// How `stallreport summarize` groups stalls.
public enum SummaryGrouping: String, Sendable, Codable, CaseIterable {
    /// One group per fingerprint (the same stack): the default.
    case fingerprint
    /// One group per scene the host app set (screen, request, test name); stalls without a scene
    /// (or with an empty one) form one group, shown as ``noSceneLabel``.
    case scene

    /// How the group of stalls without a scene is shown.
    public static let noSceneLabel = "(no scene)"

    /// The key of the group `record` belongs to: its fingerprint, or its scene (empty for none).
    public func key(of record: StallRecord) -> String {
        switch self {
        case .fingerprint: return record.fingerprint
        case .scene: return record.scene ?? ""
        }
    }

    /// How a group key is shown: the key itself, or ``noSceneLabel`` for the no-scene group.
    public func label(forKey key: String) -> String {
        self == .scene && key.isEmpty ? Self.noSceneLabel : key
    }

    /// The column title of the group key: `FINGERPRINT` or `SCENE`.
    public var columnTitle: String { rawValue.uppercased() }
}
