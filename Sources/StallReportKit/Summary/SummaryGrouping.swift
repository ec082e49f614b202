/// How `stallreport summarize` groups stalls.
public enum SummaryGrouping: String, Sendable, Codable, CaseIterable {
    /// One group per fingerprint (the same stack): the default.
    case fingerprint
    /// One group per scene the host app set (screen, request, test name); stalls without a scene
    /// (or with an empty one) form one group, shown as `(no scene)`.
    case scene
    /// One group per loop: its kind and thread (`nioEventLoop NIO-ELT-0-#1`, `runLoop main`), so
    /// each event loop of a server is a row.
    case loop

    /// How the group of stalls without a scene is shown.
    static let noSceneLabel = "(no scene)"

    /// The key of the group `record` belongs to: its fingerprint, its scene or its loop (empty for none).
    package func key(of record: StallRecord) -> String {
        switch self {
        case .fingerprint: return record.fingerprint
        case .scene: return record.scene ?? ""
        case .loop: return record.loop ?? ""
        }
    }

    /// How a group key is shown: the key itself, ``noSceneLabel`` for the no-scene group.
    package func label(forKey key: String) -> String {
        guard key.isEmpty else { return key }
        switch self {
        case .fingerprint: return key
        case .scene: return Self.noSceneLabel
        case .loop: return "(unknown loop)"
        }
    }

    /// The column title of the group key: `FINGERPRINT`, `SCENE` or `LOOP`.
    var columnTitle: String { rawValue.uppercased() }

    /// The word for a group in a headline (`scene`, `loop`); nil for fingerprints, which the
    /// headline counts anyway.
    var groupNoun: String? {
        switch self {
        case .fingerprint: return nil
        case .scene: return "scene"
        case .loop: return "loop"
        }
    }
}
