import StallReportKit

/// Tells what a stuck thread was doing from its CPU time, its loop passes and its sampled states.
enum StallClassifier {
    /// At least this many passes, none longer than a quarter of the span: congestion.
    static let congestionMinimumPasses = 8
    /// CPU share of the observed window at or above which a stall is `cpu`.
    static let cpuShare = 0.7
    /// CPU share at or below which a stall is `blocked`.
    static let blockedShare = 0.3

    static func classify(duration: UInt64, passes: Int, longestPass: UInt64, cpu: Int64, observed: UInt64, states: [String]) -> StallClassification {
        if passes >= congestionMinimumPasses && longestPass &* 4 <= duration {
            return .congestion
        }
        let share: Double
        if cpu >= 0 && observed > 0 {
            share = Double(cpu) / Double(observed)
        } else {
            let known = states.filter { $0 != "?" }
            guard !known.isEmpty else { return .mixed }
            share = Double(known.filter { $0 == "R" }.count) / Double(known.count)
        }
        if share >= cpuShare { return .cpu }
        if share <= blockedShare { return .blocked }
        return .mixed
    }
}
