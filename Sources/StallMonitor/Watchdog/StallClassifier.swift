import StallReportModel

/// Tells what a stuck thread was doing from its CPU time, its loop passes and its sampled states.
enum StallClassifier {
    /// At least this many passes, none longer than a quarter of the span: congestion.
    static let congestionMinimumPasses = 8
    /// Busy share at or above which a stall is `cpu`.
    static let cpuShare = 0.7
    /// Busy share at or below which a stall is `blocked`.
    static let blockedShare = 0.3

    /// Classifies a stall. The busy share is the larger of the CPU time share of the observed
    /// window and the share of samples in which the thread was runnable (`R`), of those whose
    /// state was read, however few (the rule of "What is measured per stall" in the How it works article; a stall cut off by `stop()` or sampled by
    /// a starved watchdog may have only one or two): on a loaded machine a spinning thread waits
    /// for a CPU part of the time, but it is still CPU-bound work. Neither known: `mixed`.
    static func classify(
        duration: UInt64, passes: Int, longestPass: UInt64, cpu: Int64, observed: UInt64, states: [SchedulerState]
    ) -> StallClassification {
        if passes >= congestionMinimumPasses && longestPass &* 4 <= duration {
            return .congestion
        }
        var shares: [Double] = []
        if cpu >= 0 && observed > 0 {
            shares.append(min(1, Double(cpu) / Double(observed)))
        }
        let known = states.filter { $0 != .unknown }
        if !known.isEmpty {
            shares.append(Double(known.filter { $0 == .running }.count) / Double(known.count))
        }
        guard let share = shares.max() else { return .mixed }
        if share >= cpuShare { return .cpu }
        if share <= blockedShare { return .blocked }
        return .mixed
    }
}
