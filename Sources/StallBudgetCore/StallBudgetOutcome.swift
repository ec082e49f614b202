/// What a test's stall budget found once the test ended: the stalls over budget, or that it
/// watched nothing, which fails the test as well (a budget never passes silently).
public struct StallBudgetOutcome: Sendable {
    /// The stalls over budget, oldest first.
    public var violations: [StallBudgetViolation]
    /// Why nothing was watched (no monitor ran, or none of the loops watched ran while the test
    /// did), and how to watch the test's code: the failure message. nil when something was watched.
    public var nothingWatched: String?

    /// An outcome with `violations` and, when nothing was watched, why.
    public init(violations: [StallBudgetViolation], nothingWatched: String?) {
        self.violations = violations
        self.nothingWatched = nothingWatched
    }

    /// The failure messages the test records, one per violation, and the nothing-watched one.
    public var failureMessages: [String] {
        violations.map(\.message) + (nothingWatched.map { [$0] } ?? [])
    }
}
