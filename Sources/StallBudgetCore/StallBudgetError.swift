/// Why a stall budget could not watch a test: its report directory or a monitor could not be set
/// up, or ``StallBudget/configuration()`` was called outside a budgeted test.
public struct StallBudgetError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in one sentence.
    public let description: String

    /// An error that says `description`.
    public init(_ description: String) {
        self.description = description
    }
}
