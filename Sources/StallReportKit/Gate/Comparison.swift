import Foundation

/// How a fingerprint changed between a base (a baseline, or an earlier set of reports) and a head
/// (the current reports). Shared by `gate --baseline` and `diff`.
public struct FingerprintChange: Sendable, Equatable {
    /// The kinds of change.
    public enum Kind: String, Sendable, Codable, CaseIterable {
        /// In the head only.
        case new
        /// In both, with a count or p95 higher than the base by more than the tolerance.
        case regressed
        /// In the base only: good news.
        case fixed
        /// In both, within the tolerance (possibly better).
        case unchanged
    }

    /// The fingerprint.
    public var fingerprint: String
    /// The kind of change.
    public var kind: Kind
    /// The base's numbers, when the fingerprint is in the base.
    public var base: Baseline.Entry?
    /// The head's numbers, when the fingerprint is in the head.
    public var head: Baseline.Entry?
    /// For `regressed`: what regressed, e.g. `count 3 → 6 (+100%)`.
    public var reasons: [String]
    /// For `new` and `regressed`: true when the head has fewer occurrences than the policy's
    /// minimum, so the finding is a warning rather than a failure.
    package var belowMinimum: Bool

    /// A label for people: the top frame recorded for the head, else for the base.
    package var headline: String {
        head?.topFrame ?? base?.topFrame ?? "no stack"
    }

    /// True for new or regressed changes with enough occurrences to count as a failure.
    public var isFailure: Bool {
        (kind == .new || kind == .regressed) && !belowMinimum
    }
}

/// When a difference between base and head counts as a regression.
public struct RegressionPolicy: Sendable, Equatable {
    /// Relative tolerance: the head may exceed the base's count and p95 by this fraction.
    package var tolerance: Double
    /// Fewest occurrences in the head for a new or regressed fingerprint to be a failure.
    package var minOccurrences: Int

    /// Creates a policy.
    public init(tolerance: Double = GateConfig.defaultTolerance, minOccurrences: Int = GateConfig.defaultMinOccurrences)
    {
        self.tolerance = tolerance
        self.minOccurrences = minOccurrences
    }

    /// Compares base and head entries; the result lists every fingerprint of either side, sorted
    /// by kind (new, regressed, fixed, unchanged) and then by the head's total stall time.
    package func compare(base: [Baseline.Entry], head: [Baseline.Entry]) -> [FingerprintChange] {
        let baseByKey = Dictionary(base.map { ($0.fingerprint, $0) }, uniquingKeysWith: { a, _ in a })
        let headByKey = Dictionary(head.map { ($0.fingerprint, $0) }, uniquingKeysWith: { a, _ in a })
        var changes: [FingerprintChange] = []
        for (key, now) in headByKey {
            let below = now.count < minOccurrences
            guard let before = baseByKey[key] else {
                changes.append(
                    FingerprintChange(
                        fingerprint: key, kind: .new, base: nil, head: now, reasons: [], belowMinimum: below))
                continue
            }
            var reasons: [String] = []
            if Double(now.count) > Double(before.count) * (1 + tolerance) {
                reasons.append(
                    "count \(before.count) → \(now.count) (\(Durations.change(from: Double(before.count), to: Double(now.count))))"
                )
            }
            if now.p95Ms > before.p95Ms * (1 + tolerance) {
                reasons.append(
                    "p95 \(Durations.format(before.p95Ms)) → \(Durations.format(now.p95Ms)) (\(Durations.change(from: before.p95Ms, to: now.p95Ms)))"
                )
            }
            changes.append(
                FingerprintChange(
                    fingerprint: key, kind: reasons.isEmpty ? .unchanged : .regressed, base: before, head: now,
                    reasons: reasons, belowMinimum: reasons.isEmpty ? false : below))
        }
        for (key, before) in baseByKey where headByKey[key] == nil {
            changes.append(
                FingerprintChange(
                    fingerprint: key, kind: .fixed, base: before, head: nil, reasons: [], belowMinimum: false))
        }
        let order = Dictionary(uniqueKeysWithValues: FingerprintChange.Kind.allCases.enumerated().map { ($1, $0) })
        return changes.sorted { a, b in
            if a.kind != b.kind { return order[a.kind]! < order[b.kind]! }
            let ta = a.head?.totalMs ?? a.base?.totalMs ?? 0
            let tb = b.head?.totalMs ?? b.base?.totalMs ?? 0
            if ta != tb { return ta > tb }
            return a.fingerprint < b.fingerprint
        }
    }
}
