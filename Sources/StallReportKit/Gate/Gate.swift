import Foundation

/// One kind of budget the gate can check.
public enum BudgetKind: String, Sendable, Codable, CaseIterable {
    /// Total number of stalls.
    case maxStalls
    /// Number of stalls of any one fingerprint.
    case maxStallsPerFingerprint
    /// Duration of any single stall.
    case maxStallMs
    /// Nearest-rank p95 duration of any one fingerprint.
    case maxP95Ms
    /// Sum of all stall durations.
    case maxTotalStallMs
    /// Number of fatal stalls (the process died during the stall, including stale `inProgress`
    /// reports of processes that no longer run).
    case maxFatalStalls

    /// The command-line flag that sets this budget.
    package var flag: String {
        switch self {
        case .maxStalls: return "--max-stalls"
        case .maxStallsPerFingerprint: return "--max-per-fingerprint"
        case .maxStallMs: return "--max-stall-ms"
        case .maxP95Ms: return "--max-p95-ms"
        case .maxTotalStallMs: return "--max-total-ms"
        case .maxFatalStalls: return "--max-fatal"
        }
    }

    /// Whether the budget's values are durations (milliseconds) rather than counts.
    var isDuration: Bool {
        switch self {
        case .maxStalls, .maxStallsPerFingerprint, .maxFatalStalls: return false
        case .maxStallMs, .maxP95Ms, .maxTotalStallMs: return true
        }
    }

    /// What the budget limits, for people.
    package var title: String {
        switch self {
        case .maxStalls: return "stalls in total"
        case .maxStallsPerFingerprint: return "stalls per fingerprint"
        case .maxStallMs: return "longest single stall"
        case .maxP95Ms: return "p95 duration per fingerprint"
        case .maxTotalStallMs: return "total stall time"
        case .maxFatalStalls: return "fatal stalls"
        }
    }

    /// Formats a value of this budget.
    package func format(_ value: Double) -> String {
        isDuration ? Durations.format(value) : "\(Int(saturating: value))"
    }
}

/// The outcome of one budget.
public struct BudgetCheck: Sendable, Equatable {
    /// Which budget.
    public var kind: BudgetKind
    /// The limit.
    public var limit: Double
    /// The measured value (for per-fingerprint budgets, the worst fingerprint's).
    public var actual: Double
    /// The fingerprints over the limit (per-fingerprint budgets), or the contributors in order of
    /// impact (total budgets); empty when the budget holds.
    public var offenders: [FingerprintStats]

    /// True when the budget holds.
    public var passed: Bool { actual <= limit }

    /// The value one fingerprint contributes to this budget.
    package func value(of group: FingerprintStats) -> Double {
        switch kind {
        case .maxStalls, .maxStallsPerFingerprint: return Double(group.count)
        case .maxStallMs: return group.maxMs
        case .maxP95Ms: return group.p95Ms
        case .maxTotalStallMs: return group.totalMs
        case .maxFatalStalls: return Double(group.fatalCount)
        }
    }

    /// Offender order: larger value first, then by impact (total time, count, fingerprint).
    package func isWorse(_ a: FingerprintStats, than b: FingerprintStats) -> Bool {
        let (va, vb) = (value(of: a), value(of: b))
        if va != vb { return va > vb }
        return FingerprintStats.byImpact(a, b)
    }

    /// `stalls in total: 12 > 10` or `longest single stall: 812 ms ≤ 2.00 s`.
    package var verdictLine: String {
        "\(kind.title): \(kind.format(actual)) \(passed ? "≤" : ">") \(kind.format(limit))"
    }
}

/// A suppression and the stalls it matched.
public struct SuppressionMatch: Sendable, Equatable {
    /// The suppression.
    public var suppression: SuppressionList.Suppression
    /// The matched group, when the fingerprint occurred.
    public var group: FingerprintStats?
}

/// The gate's verdict and everything that led to it.
public struct GateResult: Sendable {
    /// Every configured budget, in a fixed order.
    public var checks: [BudgetCheck]
    /// Every configured blocking-call budget (``GateConfig/maxBlockingMsPerCallSite``,
    /// ``GateConfig/maxTotalBlockingMs``), judged on the `blocking-*.json` reports read.
    package var blockingChecks: [BlockingBudgetCheck] = []
    /// Blocking-calls reports read.
    package var blockingReportsRead = 0
    /// Blocking call sites against the baseline's (keyed `<fingerprint>@<thread kind>`), when the
    /// baseline lists blocking call sites.
    package var blockingChanges: [FingerprintChange]?
    /// Baseline comparison, when a baseline was given (suppressed fingerprints left out).
    public var changes: [FingerprintChange]?
    /// The baseline file's path, when one was given.
    var baselinePath: String?
    /// Active suppressions that matched stalls (not counted).
    public var suppressed: [SuppressionMatch]
    /// Expired suppressions (their stalls count again).
    public var expired: [SuppressionMatch]
    /// Groups that were counted, by impact.
    public var counted: [FingerprintStats]
    /// The configuration used.
    package var config: GateConfig
    /// Problems met while reading.
    public var problems: [ReportProblem]
    /// Valid reports read, and those left out by filters (including `ignoreShorterThanMs`).
    package var reportsRead: Int
    /// Reports left out by filters.
    package var reportsFilteredOut: Int

    /// Violated budgets.
    package var failedChecks: [BudgetCheck] { checks.filter { !$0.passed } }
    /// Violated blocking-call budgets.
    package var failedBlockingChecks: [BlockingBudgetCheck] { blockingChecks.filter { !$0.passed } }
    /// New or regressed fingerprints that fail the gate.
    package var failingChanges: [FingerprintChange] { (changes ?? []).filter(\.isFailure) }
    /// New or regressed blocking call sites that fail the gate.
    package var failingBlockingChanges: [FingerprintChange] { (blockingChanges ?? []).filter(\.isFailure) }
    /// New or regressed fingerprints below the minimum occurrences: warnings.
    package var toleratedChanges: [FingerprintChange] {
        (changes ?? []).filter { ($0.kind == .new || $0.kind == .regressed) && $0.belowMinimum }
    }
    /// Baseline fingerprints that did not occur: good news.
    package var fixed: [FingerprintChange] { (changes ?? []).filter { $0.kind == .fixed } }
    /// Number of stalls counted.
    package var stallsCounted: Int { counted.reduce(0) { $0 + $1.count } }
    /// Total stall time counted.
    var totalCountedMs: Double { counted.reduce(0) { $0 + $1.totalMs } }

    /// True when every budget holds and nothing new or regressed fails.
    public var passed: Bool {
        failedChecks.isEmpty && failedBlockingChecks.isEmpty && failingChanges.isEmpty && failingBlockingChanges.isEmpty
    }
}

/// Evaluates budgets, a baseline and suppressions against a collection of reports.
public struct Gate: Sendable {
    /// The budgets and settings.
    package var config: GateConfig
    /// The baseline, when one is used.
    package var baseline: Baseline?
    /// The suppressions, when any.
    package var suppressions: SuppressionList?
    /// The time at which suppressions are judged.
    package var now: Date

    /// Creates a gate.
    public init(config: GateConfig, baseline: Baseline? = nil, suppressions: SuppressionList? = nil, now: Date = Date())
    {
        self.config = config
        self.baseline = baseline
        self.suppressions = suppressions
        self.now = now
    }

    /// Judges the collection. Its records should already be filtered by `ignoreShorterThanMs`
    /// (see ``ReportCollector``).
    public func evaluate(_ collection: ReportCollection) -> GateResult {
        let all = collection.stats()
        let byKey = Dictionary(uniqueKeysWithValues: all.map { ($0.fingerprint, $0) })
        var active: [String: SuppressionList.Suppression] = [:]
        var suppressed: [SuppressionMatch] = []
        var expired: [SuppressionMatch] = []
        for entry in suppressions?.suppressions ?? [] {
            if entry.isActive(at: now) {
                active[entry.fingerprint] = entry
                if let group = byKey[entry.fingerprint] {
                    suppressed.append(SuppressionMatch(suppression: entry, group: group))
                }
            } else {
                expired.append(SuppressionMatch(suppression: entry, group: byKey[entry.fingerprint]))
            }
        }
        let counted = all.filter { active[$0.fingerprint] == nil }

        var checks: [BudgetCheck] = []
        func perFingerprint(_ kind: BudgetKind, _ limit: Double?) {
            guard let limit else { return }
            var check = BudgetCheck(kind: kind, limit: limit, actual: 0, offenders: [])
            check.actual = counted.map { check.value(of: $0) }.max() ?? 0
            check.offenders = counted.filter { check.value(of: $0) > limit }.sorted { check.isWorse($0, than: $1) }
            checks.append(check)
        }
        func overall(_ kind: BudgetKind, _ limit: Double?) {
            guard let limit else { return }
            var check = BudgetCheck(kind: kind, limit: limit, actual: 0, offenders: [])
            check.actual = counted.reduce(0) { $0 + check.value(of: $1) }
            // Contributors only: a fingerprint without fatal stalls is no offender of the fatal budget.
            if !check.passed {
                check.offenders = counted.filter { check.value(of: $0) > 0 }.sorted { check.isWorse($0, than: $1) }
            }
            checks.append(check)
        }
        overall(.maxStalls, config.maxStalls.map(Double.init))
        perFingerprint(.maxStallsPerFingerprint, config.maxStallsPerFingerprint.map(Double.init))
        perFingerprint(.maxStallMs, config.maxStallMs)
        perFingerprint(.maxP95Ms, config.maxP95Ms)
        overall(.maxTotalStallMs, config.maxTotalStallMs)
        overall(.maxFatalStalls, config.maxFatalStalls.map(Double.init))

        var changes: [FingerprintChange]?
        var blockingChanges: [FingerprintChange]?
        if let baseline {
            let policy = RegressionPolicy(
                tolerance: config.tolerance ?? GateConfig.defaultTolerance,
                minOccurrences: config.minOccurrences ?? GateConfig.defaultMinOccurrences)
            // A suppressed fingerprint is neither judged nor reported as fixed.
            let base = baseline.fingerprints.filter { active[$0.fingerprint] == nil || byKey[$0.fingerprint] == nil }
            changes = policy.compare(base: base, head: counted.map(Baseline.Entry.init))
            if let known = baseline.blockingCallSites {
                blockingChanges = policy.compare(
                    base: known, head: collection.blockingCalls.stats().map(Baseline.Entry.init(blocking:)))
            }
        }
        var result = GateResult(
            checks: checks, changes: changes, baselinePath: config.baseline, suppressed: suppressed, expired: expired,
            counted: counted, config: config, problems: collection.problems, reportsRead: collection.reportsRead,
            reportsFilteredOut: collection.reportsFilteredOut)
        result.blockingChecks = BlockingBudgetCheck.checks(config, sites: collection.blockingCalls.stats())
        result.blockingReportsRead = collection.blockingCalls.reportsRead
        result.blockingChanges = blockingChanges
        return result
    }
}
