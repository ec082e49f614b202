import Foundation
import StallMonitorTesting
import Testing

/// Runs `body` under `trait` for the current test (as Swift Testing runs it around a test), inside
/// `withKnownIssue`; returns the messages of the issues the budget recorded. Each must start with
/// one of `prefixes` (by default a budget's failures, `Stall of …` or `Nothing was watched: …`):
/// anything else fails the test.
func budgetIssues(
    _ trait: StallBudgetTrait,
    prefixes: [String] = ["Stall of ", "Nothing was watched: "],
    _ body: @escaping @Sendable () async throws -> Void
) async throws -> [String] {
    let messages = Collected()
    try await withKnownIssue {
        try await trait.provideScope(for: Test.current!, testCase: Test.Case.current, performing: body)
    } matching: { issue in
        let text = issue.comments.map(\.rawValue).joined(separator: " ")
        guard prefixes.contains(where: { text.hasPrefix($0) }) else { return false }
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

/// Requires exactly one message, naming `function` and, when given, the loop `kind`'s thread;
/// deletes the report directories the messages name whether or not the checks hold.
func expectOneStall(
    _ messages: [String], in function: String, onThreadOf kind: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    defer { removeReports(of: messages) }
    try #require(messages.count == 1, "\(messages)", sourceLocation: sourceLocation)
    #expect(messages[0].contains(function), "\(messages[0])", sourceLocation: sourceLocation)
    if let kind {
        #expect(messages[0].contains("\(kind) thread"), "\(messages[0])", sourceLocation: sourceLocation)
    }
}
