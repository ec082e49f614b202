import Foundation
import StallMonitorTesting
import Testing

/// Runs `body` under `trait` for the current test (as Swift Testing runs it around a test), inside
/// `withKnownIssue`; returns the messages of the issues the budget recorded. Each must be a
/// budget's failure (`Stall of …` or `Nothing was watched: …`): anything else fails the test.
func budgetIssues(
    _ trait: StallBudgetTrait, _ body: @escaping @Sendable () async throws -> Void
) async throws -> [String] {
    let messages = Collected()
    try await withKnownIssue {
        try await trait.provideScope(for: Test.current!, testCase: Test.Case.current, performing: body)
    } matching: { issue in
        let text = issue.comments.map(\.rawValue).joined(separator: " ")
        guard text.hasPrefix("Stall of ") || text.hasPrefix("Nothing was watched: ") else { return false }
        messages.append(text)
        return true
    }
    return messages.all
}

/// Deletes the report directory a failure message names.
func removeReports(of messages: [String]) {
    for message in messages {
        if let path = reportPath(in: message) {
            try? FileManager.default.removeItem(at: URL(fileURLWithPath: path).deletingLastPathComponent())
        }
    }
}
