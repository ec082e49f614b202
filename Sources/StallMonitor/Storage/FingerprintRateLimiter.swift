/// Admits at most `limit` full reports per fingerprint per sliding `window` (monotonic time).
final class FingerprintRateLimiter: Sendable {
    private let limit: Int
    private let window: UInt64
    private let admitted = Locked<[String: [UInt64]]>([:])

    init(limit: Int, window: UInt64) {
        self.limit = limit
        self.window = window
    }

    /// Whether a full report of `fingerprint` at monotonic time `now` is within the quota.
    func admit(_ fingerprint: String, at now: UInt64) -> Bool {
        admitted.withLock { admitted in
            var times = admitted[fingerprint, default: []].filter { now &- $0 < window }
            defer { admitted[fingerprint] = times }
            guard times.count < limit else { return false }
            times.append(now)
            return true
        }
    }
}
