/// Conversions of report numbers that cannot trap: a schema-valid `Double` (say `1e22`
/// milliseconds) is far outside `Int`'s range, and `Int(_:)` would abort the program.
extension Int {
    /// `value` rounded toward zero and clamped to `Int.min...Int.max`; 0 for NaN.
    package init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= 9.223372036854775807e18 {
            self = .max
        } else if value <= -9.223372036854775807e18 {
            self = .min
        } else {
            self = Int(value)
        }
    }
}

extension Int64 {
    /// `value` rounded toward zero and clamped to `Int64.min...Int64.max`; 0 for NaN.
    package init(saturating value: Double) {
        self = Int64(Int(saturating: value))
    }
}

extension Sequence where Element == Int {
    /// The sum, stopping at `Int.max` (or `Int.min`) instead of overflowing.
    package func saturatingSum() -> Int {
        reduce(0) { total, value in
            let (sum, overflow) = total.addingReportingOverflow(value)
            return overflow ? (value > 0 ? .max : .min) : sum
        }
    }
}
