/// Why stalls were not reported in full, as a session record's `reportsDropped` counts them.
/// Open: a record from another version may carry reasons this one does not know.
struct DroppedReportReason: RawRepresentable, Hashable, Sendable {
    /// The key written in session records.
    var rawValue: String

    /// A reason by the key session records carry.
    init(rawValue: String) { self.rawValue = rawValue }

    /// A report could not be written (an error of that code).
    static let reportWrite = DroppedReportReason(rawValue: StallMonitorError.Code.reportWrite.name)
    /// A report could not be encoded (an error of that code).
    static let reportEncoding = DroppedReportReason(rawValue: StallMonitorError.Code.reportEncoding.name)
    /// Past its fingerprint's rate limit: counted in a summary instead.
    static let rateLimitedToSummary = DroppedReportReason(rawValue: "rateLimitedToSummary")
    /// Deleted to keep the directory within its quota.
    static let deletedForQuota = DroppedReportReason(rawValue: "deletedForQuota")
    /// Overwritten before a starved watchdog could report it.
    static let watchdogStarved = DroppedReportReason(rawValue: "watchdogStarved")
}
