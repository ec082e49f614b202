import Foundation

/// Whether a stall had ended when its report was written.
public enum StallStatus: String, Codable, Sendable, CaseIterable {
    /// The span ended; the duration is final.
    case ended
    /// The span was still open when the report was written.
    case inProgress
    /// The span never ended: the process died during it.
    case fatal
}
