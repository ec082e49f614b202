import Foundation

/// Percentiles by the nearest-rank method.
///
/// For `n` sorted values and a percentile `p` in `0...100`, the result is the value at 1-based
/// rank `ceil(p / 100 × n)` (rank 1 for `p = 0`). It is always one of the observed values, never
/// an interpolation: with 20 values, p95 is the 19th smallest; with fewer than 20, p95 is the
/// maximum. An empty input has no percentile.
package enum Percentile {
    /// The nearest-rank `p`-th percentile of `sorted`, which must be in ascending order.
    package static func nearestRank(_ p: Double, sorted: [Double]) -> Double? {
        guard !sorted.isEmpty else { return nil }
        let clamped = min(max(p, 0), 100)
        // p × n first, then / 100: exact for whole percentiles, so p95 of 20 values is rank 19, not 20.
        let rank = max(1, Int((clamped * Double(sorted.count) / 100).rounded(.up)))
        return sorted[min(rank, sorted.count) - 1]
    }

    /// The nearest-rank `p`-th percentile of unsorted `values`.
    package static func nearestRank(_ p: Double, of values: [Double]) -> Double? {
        nearestRank(p, sorted: values.sorted())
    }
}
