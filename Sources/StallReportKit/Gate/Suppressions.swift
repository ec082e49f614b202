import Foundation

/// Fingerprints the gate must not count for now: known stalls with a reason and an expiry date.
///
/// File format (JSON): `{"suppressions": [{"fingerprint": "…", "reason": "…", "expires": "2026-06-30"}]}`.
/// `expires` is a calendar date (the suppression holds through that whole day, UTC) or an
/// ISO 8601 date-time (it holds until that instant). Every entry needs all three keys: a
/// suppression without a reason or an end is how stalls get forgotten.
public struct SuppressionList: Codable, Sendable, Equatable {
    /// One suppressed fingerprint.
    public struct Suppression: Codable, Sendable, Equatable {
        /// The fingerprint.
        public var fingerprint: String
        /// Why it is suppressed (a ticket, an explanation).
        public var reason: String
        /// The text of the expiry, as written.
        public var expires: String

        /// Creates a suppression.
        public init(fingerprint: String, reason: String, expires: String) {
            self.fingerprint = fingerprint
            self.reason = reason
            self.expires = expires
        }

        /// The instant the suppression stops: the start of the day after a calendar date, or the
        /// given date-time. Nil when `expires` is not a date.
        package var expiryInstant: Date? {
            if expires.count == 10, let day = RecordFilter.parseDate(expires) {
                return day.addingTimeInterval(86_400)
            }
            return ReportCoding.parseDate(expires)
        }

        /// Whether the suppression still holds at `now`.
        func isActive(at now: Date) -> Bool {
            guard let end = expiryInstant else { return false }
            return now < end
        }
    }

    /// The entries.
    public var suppressions: [Suppression]

    /// Creates a list.
    public init(suppressions: [Suppression]) {
        self.suppressions = suppressions
    }

    /// Reads and checks a suppressions file: every `expires` must be a date, fingerprints unique.
    public static func load(path: String) throws(ConfigFileError) -> SuppressionList {
        let data = try ConfigFile.read(path: path, what: "suppressions")
        let list: SuppressionList
        do {
            list = try JSONDecoder().decode(SuppressionList.self, from: data)
        } catch {
            throw ConfigFileError(path: path, message: "not a suppressions file: \(ConfigFile.describe(error))")
        }
        var seen = Set<String>()
        for (index, entry) in list.suppressions.enumerated() {
            if entry.expiryInstant == nil {
                throw ConfigFileError(
                    path: path,
                    message:
                        "suppressions[\(index)]: expires '\(entry.expires)' is not a date (use YYYY-MM-DD or an ISO 8601 date-time)"
                )
            }
            if entry.fingerprint.isEmpty || entry.reason.trimmingCharacters(in: .whitespaces).isEmpty {
                throw ConfigFileError(
                    path: path, message: "suppressions[\(index)]: fingerprint and reason must not be empty")
            }
            if !seen.insert(entry.fingerprint).inserted {
                throw ConfigFileError(
                    path: path, message: "suppressions[\(index)]: fingerprint \(entry.fingerprint) is listed twice")
            }
        }
        return list
    }
}
