import Foundation

extension StallStatus {
    /// Whether `data` (a report's bytes) holds this status as a JSON string anywhere: a cheap
    /// filter before decoding, never a verdict (the decoded report's ``StallReport/status``
    /// decides). Spelled from ``rawValue``, so a renamed status cannot leave a stale literal behind.
    package func isMentioned(in data: Data) -> Bool {
        data.range(of: Data("\"\(rawValue)\"".utf8)) != nil
    }
}
