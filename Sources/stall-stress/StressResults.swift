/// Everything a stress run measured, written as JSON for Scripts/stress.
struct StressResults: Codable, Sendable {
    struct Counts: Codable, Sendable {
        var fileDescriptors: Int
        var threads: Int
    }

    var threads: Int
    var stalls: Int
    var thresholdMs: Int
    var intervalMs: Int
    var stallMs: String
    var gapMs: String
    var start: Counts
    var baseline: StressRound.Result
    var main: StressRound.Result
    var mainReports: ReportCheck.Result
    var second: StressRound.Result
    var secondReports: ReportCheck.Result
    /// Descriptors open after the main round that were not open after the baseline.
    var fileDescriptorsLeftAfterStop: [String]
    /// Of those, the ones a child process holds too (a sanitizer's symbolizer): not checked.
    var fileDescriptorsSharedWithChildren: [String]
    var peakRSSKiB: Int
    var rssKiB: Int
    var failures: [String]
}
