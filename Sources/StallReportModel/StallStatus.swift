import Foundation

/// Whether a stall had ended when its report was written.
///
/// An open set of values, like ``StallClassification``: a status written by a newer monitor reads
/// as itself (``isKnown`` false) and is counted, never rejected.
public struct StallStatus: OpenReportValue {
    /// The value as written in reports, e.g. `ended`.
    public let rawValue: String

    /// A status as written in a report, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The span ended; the duration is final.
    public static let ended = Self(rawValue: "ended")
    /// The span was still open when the report was written.
    public static let inProgress = Self(rawValue: "inProgress")
    /// The span never ended: the process died during it.
    public static let fatal = Self(rawValue: "fatal")

    /// The statuses this version writes, in display order.
    public static let known: [StallStatus] = [.ended, .inProgress, .fatal]
}
