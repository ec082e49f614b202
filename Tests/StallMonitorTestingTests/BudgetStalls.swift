import Foundation
import Glibc

/// The ways these tests make a loop stall past its budget. Each is `@inline(never)` and named for
/// what it does, so the failure messages can be checked for it.
enum BudgetStalls {
    /// Sleeps (blocked in `nanosleep`) for `milliseconds`.
    @inline(never)
    static func sleepPastTheBudgetForTest(milliseconds: Int) {
        usleep(UInt32(milliseconds) * 1000)
    }

    /// Same as ``sleepPastTheBudgetForTest(milliseconds:)``, under another name (a second stall).
    @inline(never)
    static func sleepAgainPastTheBudgetForTest(milliseconds: Int) {
        usleep(UInt32(milliseconds) * 1000)
    }
}

/// Texts collected from another closure (a `withKnownIssue` matcher), safely across threads.
final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []

    func append(_ item: String) { lock.withLock { items.append(item) } }

    var all: [String] { lock.withLock { items } }
}

/// A one-shot signal from a loop thread to the test.
final class Started: @unchecked Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    func signal() { semaphore.signal() }

    /// Waits at most 10 s; false on timeout.
    func wait() -> Bool { semaphore.wait(timeout: .now() + 10) == .success }
}

/// The milliseconds a failure message gives the stall (`Stall of 402 ms …`).
func stallMilliseconds(in message: String) -> Int? {
    guard let match = message.firstMatch(of: /Stall of (\d+) ms/) else { return nil }
    return Int(match.1)
}

/// The report path a failure message names (`…; report: /path`).
func reportPath(in message: String) -> String? {
    guard let range = message.range(of: "; report: ") else { return nil }
    return String(message[range.upperBound...])
}
