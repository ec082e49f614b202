import Foundation

/// Order statistics of a sample of measurements.
enum Stats {
    /// The median (mean of the two middle values for an even count); 0 when empty.
    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// Nearest-rank percentile: the value at rank ⌈p/100·n⌉ of the sorted values; 0 when empty.
    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let rank = max(1, Int((p / 100 * Double(sorted.count)).rounded(.up)))
        return sorted[min(rank, sorted.count) - 1]
    }

    static func mean(_ values: [Double]) -> Double {
        values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count)
    }

    /// A distribution-free interval for the median of `values`: the k-th lowest and the k-th
    /// highest value for the largest k whose chance of leaving the median out, 2·P(Binomial(n, ½)
    /// ≤ k − 1), is at most 1 − `confidence`; nil when even the lowest and highest value give less
    /// (fewer than 6 values for 95 %). Returns the bounds and the coverage they have.
    static func medianInterval(
        _ values: [Double], confidence: Double = 0.95
    ) -> (
        low: Double, high: Double, coverage: Double
    )? {
        let n = values.count
        guard n > 0 else { return nil }
        // below[j] = P(Binomial(n, ½) ≤ j), from the binomial coefficients.
        var coefficient = 1.0
        var total = 0.0
        var below: [Double] = []
        for j in 0...n {
            if j > 0 { coefficient = coefficient * Double(n - j + 1) / Double(j) }
            total += coefficient
            below.append(total / pow(2, Double(n)))
        }
        guard let k = (1...((n + 1) / 2)).last(where: { 2 * below[$0 - 1] <= 1 - confidence }) else { return nil }
        let sorted = values.sorted()
        return (sorted[k - 1], sorted[n - k], 1 - 2 * below[k - 1])
    }
}

/// Number formatting for the table.
enum Format {
    static func fixed(_ value: Double, _ digits: Int) -> String {
        String(format: "%.\(digits)f", value)
    }

    static func ratio(_ value: Double) -> String { fixed(value, 4) }

    static func micro(_ nanoseconds: Double) -> String { fixed(nanoseconds / 1_000, 1) + " µs" }

    static func milli(_ value: Double, _ digits: Int = 2) -> String { fixed(value, digits) + " ms" }

    static func percent(_ share: Double) -> String { fixed(share * 100, 1) + " %" }

    static func mib(_ bytes: Double) -> String { fixed(bytes / 1_048_576, 2) + " MiB" }

    static func count(_ value: Double) -> String {
        let number = Int(value.rounded())
        let digits = String(abs(number))
        var grouped = ""
        for (index, character) in digits.reversed().enumerated() {
            if index > 0 && index % 3 == 0 { grouped.append(",") }
            grouped.append(character)
        }
        return (number < 0 ? "-" : "") + String(grouped.reversed())
    }
}

extension Duration {
    /// The duration in milliseconds.
    var inMilliseconds: Double {
        Double(components.seconds) * 1_000 + Double(components.attoseconds) / 1e15
    }
}
