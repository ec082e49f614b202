/// A budget of `stallreport gate` on blocking calls (from `blocking-*.json` reports).
package enum BlockingBudgetKind: String, Sendable, Codable, CaseIterable {
    /// Time any one call site blocked (the sum of its calls).
    case maxBlockingMsPerCallSite
    /// Time all blocking calls blocked.
    case maxTotalBlockingMs

    /// The command-line flag that sets this budget.
    package var flag: String {
        switch self {
        case .maxBlockingMsPerCallSite: "--max-blocking-ms"
        case .maxTotalBlockingMs: "--max-total-blocking-ms"
        }
    }

    /// What the budget limits, for people.
    package var title: String {
        switch self {
        case .maxBlockingMsPerCallSite: "blocked time per call site"
        case .maxTotalBlockingMs: "blocked time in total"
        }
    }
}

/// The outcome of one blocking-call budget.
package struct BlockingBudgetCheck: Sendable, Equatable {
    /// Which budget.
    package var kind: BlockingBudgetKind
    /// The limit, in milliseconds.
    package var limit: Double
    /// The measured value (per call site: the worst call site's), in milliseconds.
    package var actual: Double
    /// The call sites over the limit (per call site), or every call site (total), most blocked
    /// time first; empty when the budget holds.
    package var offenders: [BlockingCallSiteStats]

    /// True when the budget holds.
    package var passed: Bool { actual <= limit }

    /// `blocked time per call site: 340 ms > 100 ms`.
    package var verdictLine: String {
        "\(kind.title): \(Durations.format(actual)) \(passed ? "≤" : ">") \(Durations.format(limit))"
    }

    /// `usleep on concurrencyPool from handler() (4 calls)` for one offender.
    package static func describe(_ site: BlockingCallSiteStats, names: FrameNameStyle) -> String {
        "\(site.call) on \(site.loopKind) from \(names.display(site.callSite ?? "?")) (\(site.count) call\(site.count == 1 ? "" : "s"), max \(Durations.format(site.maxMs)))"
    }

    /// The checks `config` asks for over `sites` (most blocked first).
    package static func checks(_ config: GateConfig, sites: [BlockingCallSiteStats]) -> [BlockingBudgetCheck] {
        var checks: [BlockingBudgetCheck] = []
        if let limit = config.maxBlockingMsPerCallSite {
            checks.append(
                BlockingBudgetCheck(
                    kind: .maxBlockingMsPerCallSite, limit: limit, actual: sites.map { $0.totalMs }.max() ?? 0,
                    offenders: sites.filter { $0.totalMs > limit }))
        }
        if let limit = config.maxTotalBlockingMs {
            let total = sites.reduce(0) { $0 + $1.totalMs }
            checks.append(
                BlockingBudgetCheck(
                    kind: .maxTotalBlockingMs, limit: limit, actual: total, offenders: total > limit ? sites : []))
        }
        return checks
    }
}
