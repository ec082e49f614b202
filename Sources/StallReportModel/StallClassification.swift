import Foundation

/// What the stuck thread was doing during a stall.
///
/// An open set of values: a newer monitor may write a classification this code does not know, and
/// the report still reads (``isKnown`` is false, ``rawValue`` holds what was written), so readers
/// count it instead of rejecting the report. Compare with the known values; keep a default.
public struct StallClassification: OpenReportValue {
    /// The value as written in reports, e.g. `cpu`.
    public let rawValue: String

    /// A classification as written in a report, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Mostly running on a CPU (a long computation).
    public static let cpu = Self(rawValue: "cpu")
    /// Mostly off CPU: waiting on a lock, I/O or a sleep.
    public static let blocked = Self(rawValue: "blocked")
    /// Neither clearly on nor clearly off CPU.
    public static let mixed = Self(rawValue: "mixed")
    /// Many short loop passes, none long on its own: the loop was flooded with work.
    public static let congestion = Self(rawValue: "congestion")

    /// The classifications this version writes, in display order.
    public static let known: [StallClassification] = [.cpu, .blocked, .mixed, .congestion]
}
