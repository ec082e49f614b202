import Foundation

/// A distribution of stall durations over fixed buckets.
public struct DurationHistogram: Codable, Sendable, Equatable {
    /// One bucket: durations in `lowerMs ..< upperMs` (no upper bound when `upperMs` is nil).
    public struct Bucket: Codable, Sendable, Equatable {
        /// Inclusive lower bound, in milliseconds.
        public var lowerMs: Double
        /// Exclusive upper bound, in milliseconds; nil for the last bucket.
        public var upperMs: Double?
        /// Number of stalls in the bucket.
        public var count: Int

        /// A label such as `250–500 ms` or `≥ 10 s`.
        package var label: String {
            guard let upperMs else { return "≥ \(Durations.short(lowerMs))" }
            return "\(Durations.short(lowerMs))–\(Durations.short(upperMs))"
        }
    }

    /// Bucket boundaries in milliseconds.
    static let boundariesMs: [Double] = [0, 100, 250, 500, 1_000, 2_000, 5_000, 10_000]

    /// All buckets, in ascending order, including empty ones.
    public var buckets: [Bucket]

    /// Builds the histogram of the given durations.
    package init(durations: some Sequence<Double>) {
        let bounds = Self.boundariesMs
        var counts = [Int](repeating: 0, count: bounds.count)
        for duration in durations {
            let index = (bounds.lastIndex { duration >= $0 }) ?? 0
            counts[index] += 1
        }
        buckets = bounds.indices.map { index in
            Bucket(
                lowerMs: bounds[index], upperMs: index + 1 < bounds.count ? bounds[index + 1] : nil,
                count: counts[index])
        }
    }

    /// Buckets from the first to the last non-empty one (empty when there are no stalls).
    package var trimmed: ArraySlice<Bucket> {
        guard let first = buckets.firstIndex(where: { $0.count > 0 }),
            let last = buckets.lastIndex(where: { $0.count > 0 })
        else { return [] }
        return buckets[first...last]
    }
}
