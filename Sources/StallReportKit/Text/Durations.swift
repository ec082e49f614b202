import Foundation

/// Formatting of millisecond durations for people.
package enum Durations {
    /// `812 ms`, `1.20 s`, `2 min 05 s`: milliseconds below one second, seconds with two decimals
    /// below a minute, then minutes and seconds. A duration past `Int.max` seconds is shown as
    /// that many (saturated), never wrapped around.
    package static func format(_ ms: Double) -> String {
        if ms < 1_000 { return "\(Int(saturating: ms.rounded())) ms" }
        if ms < 60_000 { return String(format: "%.2f s", ms / 1_000) }
        let seconds = Int(saturating: (ms / 1_000).rounded())
        let remainder = seconds % 60
        return "\(seconds / 60) min \(remainder < 10 ? "0" : "")\(remainder) s"
    }

    /// A compact bound for bucket labels: `250 ms`, `1 s`, `10 s`.
    package static func short(_ ms: Double) -> String {
        if ms < 1_000 { return "\(Int(saturating: ms)) ms" }
        let seconds = ms / 1_000
        return seconds == seconds.rounded() ? "\(Int(saturating: seconds)) s" : String(format: "%.1f s", seconds)
    }

    /// A signed relative change such as `+25%` or `-10%`; `n/a` when the base is zero.
    package static func change(from base: Double, to head: Double) -> String {
        guard base > 0 else { return head > 0 ? "new" : "0%" }
        let percent = (head - base) / base * 100
        return String(format: "%+.0f%%", percent)
    }
}
