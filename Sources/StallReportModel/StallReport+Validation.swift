import Foundation

extension StallReport {
    /// The largest time in milliseconds a report may hold (1e10 ms, about 116 days): no stall,
    /// interval or offset of one process lasts longer, and sums and conversions of larger values
    /// could overflow.
    public static let largestMilliseconds = 1e10

    /// The smallest time other than 0 in milliseconds a report may hold (1e-6 ms, 1 ns): no clock
    /// the monitor reads resolves less, so a smaller value is no measurement.
    public static let smallestMilliseconds = 1e-6

    /// Whether `value` (milliseconds) is 0 or within what a clock can measure: finite, from
    /// ``smallestMilliseconds`` to ``largestMilliseconds``.
    public static func isPhysicalMilliseconds(_ value: Double) -> Bool {
        value == 0 || (value.isFinite && value >= smallestMilliseconds && value <= largestMilliseconds)
    }

    /// The largest count a report or session record may hold (samples, passes, spans): 1e15.
    public static let largestCount = 1_000_000_000_000_000

    /// The first value outside what the schema allows (a negative duration or count, a zero
    /// interval, a frame or image index past its table, a time other than 0 below
    /// ``smallestMilliseconds`` or above ``largestMilliseconds``, or a count above
    /// ``largestCount``), described with its key; nil when none.
    /// Such a report is bad input: counting it would make totals and percentiles wrong.
    public var schemaViolation: String? {
        func atLeast(_ key: String, _ value: Double, _ minimum: Double) -> String? { Self.atLeast(key, value, minimum) }
        func positive(_ key: String, _ value: Double) -> String? {
            value.isFinite && value > 0
                ? Self.atMost(key, value) : "\(key) is \(value), must be a finite number above 0"
        }
        func atLeast(_ key: String, _ value: Int, _ minimum: Int) -> String? {
            guard value >= minimum else { return "\(key) is \(value), must be \(minimum) or more" }
            return value <= Self.largestCount
                ? nil : "\(key) is \(value), more than the largest accepted count \(Self.largestCount)"
        }
        let checks: [() -> String?] = [
            { atLeast("durationMs", self.durationMs, 0) },
            { positive("thresholdMs", self.thresholdMs) },
            { atLeast("mainThreadCPUMs", self.mainThreadCPUMs, 0) },
            { atLeast("cpuObservedMs", self.cpuObservedMs, 0) },
            { atLeast("loop.threadID", self.loop.threadID, 1) },
            { atLeast("loop.passes", self.loop.passes, 0) },
            { atLeast("loop.longestPassMs", self.loop.longestPassMs, 0) },
            { atLeast("process.pid", self.process.pid, 1) },
            { positive("sampling.intervalMs", self.sampling.intervalMs) },
            { positive("sampling.effectiveIntervalMs", self.sampling.effectiveIntervalMs) },
            { atLeast("sampling.maxSamples", self.sampling.maxSamples, 1) },
            { atLeast("sampling.attempted", self.sampling.attempted, 0) },
            { atLeast("sampling.taken", self.sampling.taken, 0) },
            { atLeast("sampling.timedOut", self.sampling.timedOut, 0) },
            { atLeast("sampling.dropped", self.sampling.dropped, 0) },
            {
                self.sampling.skipped.sorted { $0.key < $1.key }.lazy.compactMap {
                    atLeast("sampling.skipped.\($0.key)", $0.value, 0)
                }.first
            },
            { self.processStoppedMs.flatMap { atLeast("processStoppedMs", $0, 0) } },
            { self.machineSuspendedMs.flatMap { atLeast("machineSuspendedMs", $0, 0) } },
            { self.omittedSamples.flatMap { atLeast("omittedSamples", $0, 0) } },
            { self.indexViolation },
        ]
        for check in checks {
            if let problem = check() { return problem }
        }
        return nil
    }

    /// Frame and image references that point outside their tables, and frame fields out of range.
    private var indexViolation: String? {
        for (number, sample) in samples.enumerated() {
            if let problem = Self.atLeast("samples[\(number)].offsetMs", sample.offsetMs, 0) { return problem }
            if let bad = sample.frameIndices.first(where: { !frames.indices.contains($0) }) {
                return "samples[\(number)].frames has index \(bad), but there are \(frames.count) frames"
            }
        }
        if let bad = representativeStack.first(where: { !frames.indices.contains($0) }) {
            return "representativeStack has index \(bad), but there are \(frames.count) frames"
        }
        for (number, frame) in frames.enumerated() {
            if let image = frame.image, !images.indices.contains(image) {
                return "frames[\(number)].image is \(image), but there are \(images.count) images"
            }
            if let offset = frame.offset, offset < 0 {
                return "frames[\(number)].offset is \(offset), must be 0 or more"
            }
            if let line = frame.line, line < 1 { return "frames[\(number)].line is \(line), must be 1 or more" }
        }
        return nil
    }

    private static func atLeast(_ key: String, _ value: Double, _ minimum: Double) -> String? {
        value.isFinite && value >= minimum
            ? atMost(key, value) : "\(key) is \(value), must be a finite number, \(Int(minimum)) or more"
    }

    private static func atMost(_ key: String, _ value: Double) -> String? {
        if value > largestMilliseconds {
            return "\(key) is \(value), more than the largest accepted \(largestMilliseconds) ms"
        }
        if value > 0, value < smallestMilliseconds {
            return
                "\(key) is \(value), below 1 ns (\(smallestMilliseconds) ms): no clock measures less; must be 0 or at least that"
        }
        return nil
    }
}
