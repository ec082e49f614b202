import Foundation

/// Stalls and stall time per monitored hour: how often and how long the app was unresponsive,
/// independent of how long it ran.
public struct StallRates: Sendable, Equatable {
    /// Stalls counted.
    public var stalls: Int
    /// Their total duration, in milliseconds.
    public var stallMs: Double
    /// Fatal stalls among them.
    public var fatal: Int
    /// Monitored time, in milliseconds (more than 0).
    public var monitoredMs: Double

    /// Creates rates; `monitoredMs` must be more than 0.
    package init(stalls: Int, stallMs: Double, fatal: Int, monitoredMs: Double) {
        precondition(monitoredMs > 0, "rates need monitored time")
        self.stalls = stalls
        self.stallMs = stallMs
        self.fatal = fatal
        self.monitoredMs = monitoredMs
    }

    /// Monitored hours.
    package var monitoredHours: Double { monitoredMs / 3_600_000 }
    /// Stalls per monitored hour.
    public var stallsPerHour: Double { Double(stalls) / monitoredHours }
    /// Stall time per monitored hour, in milliseconds.
    public var stallMsPerHour: Double { stallMs / monitoredHours }
    /// Fatal stalls per monitored hour.
    public var fatalPerHour: Double { Double(fatal) / monitoredHours }
    /// Share of monitored time spent stalled (0…1; more when stalls overlap or were not monitored).
    public var stalledFraction: Double { stallMs / monitoredMs }

    /// `6.00/h`, `0.25/h`, `1200/h`: a rate per hour (see ``formatNumber(_:)``).
    package static func formatRate(_ value: Double) -> String {
        formatNumber(value) + "/h"
    }

    /// `6.00`, `0.25`, `12.5`, `1200`: two decimals below 10, one below 100, none above.
    package static func formatNumber(_ value: Double) -> String {
        if value >= 100 { return String(format: "%.0f", value) }
        if value >= 10 { return String(format: "%.1f", value) }
        return String(format: "%.2f", value)
    }

    /// `1.20 s/h`, `45 ms/h`: stall time per hour.
    package static func formatTimeRate(_ msPerHour: Double) -> String {
        Durations.format(msPerHour) + "/h"
    }

    /// `1.50 h`, `45.0 min`, `30 s`: a monitored duration.
    package static func formatHours(_ ms: Double) -> String {
        if ms >= 3_600_000 { return String(format: "%.2f h", ms / 3_600_000) }
        if ms >= 60_000 { return String(format: "%.1f min", ms / 60_000) }
        return Durations.format(ms)
    }
}
