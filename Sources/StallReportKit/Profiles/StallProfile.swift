import Foundation

/// The samples of one stall as weighted stacks, with the facts exports and viewers need.
///
/// Every sample of the report takes part, whatever its kind, weighted by the report's effective
/// sampling interval (`sampling.effectiveIntervalMs`), so the weights of a stall add up to its
/// ``sampledMs``: samples × interval. A `stack` sample is its frames; a `syscall` sample is a
/// synthetic `[syscall NAME, not unwound]` root above the frame of its program counter; a `none`
/// sample (or any sample with no frame) is the synthetic `[no stack]` frame.
public struct StallProfile: Sendable {
    /// One weighted stack.
    public struct Sample: Sendable, Equatable {
        /// Milliseconds from the stall's start.
        public var offsetMs: Double
        /// Time this sample stands for, in milliseconds.
        public var weightMs: Double
        /// The stack, root first.
        public var stack: [ProfileFrame]
    }

    /// The report's id.
    public var id: String
    /// The report's fingerprint.
    public var fingerprint: String
    /// The file the report came from.
    public var path: String
    /// When the stall began.
    public var startedAt: Date
    /// Duration of the stall in milliseconds.
    public var durationMs: Double
    /// Threshold the stall crossed, in milliseconds.
    public var thresholdMs: Double
    /// Ended, in progress or fatal.
    public var status: StallStatus
    /// What the stuck thread was doing.
    public var classification: StallClassification
    /// CPU time the stuck thread used, in milliseconds.
    public var mainThreadCPUMs: Double
    /// Process id.
    public var pid: Int
    /// Kernel thread id of the stuck thread.
    public var threadID: Int
    /// Name of the stuck thread.
    public var threadName: String
    /// Executable name.
    public var executableName: String
    /// Weight of each sample, in milliseconds.
    public var intervalMs: Double
    /// The weighted samples, oldest first.
    public var samples: [Sample]
    /// The representative stack, root first.
    public var representativeStack: [ProfileFrame]

    /// Total weight of the samples: samples × effective interval, in milliseconds.
    public var sampledMs: Double { samples.reduce(0) { $0 + $1.weightMs } }

    /// The time each sample of `report` stands for: its effective sampling interval, else the
    /// requested one, else 0 (a report with neither says nothing about time).
    public static func sampleWeightMs(of report: StallReport) -> Double {
        let interval = report.sampling.effectiveIntervalMs.isFinite && report.sampling.effectiveIntervalMs > 0
            ? report.sampling.effectiveIntervalMs : report.sampling.intervalMs
        return interval.isFinite && interval > 0 ? interval : 0
    }

    /// Reduces a decoded report to its profile.
    public init(report: StallReport, path: String) {
        id = report.id
        fingerprint = report.fingerprint
        self.path = path
        startedAt = report.startedAt
        durationMs = report.durationMs
        thresholdMs = report.thresholdMs
        status = report.status
        classification = report.classification
        mainThreadCPUMs = report.mainThreadCPUMs
        pid = report.process.pid
        threadID = report.loop.threadID
        threadName = report.loop.threadName
        executableName = report.process.executableName
        intervalMs = Self.sampleWeightMs(of: report)
        // One ProfileFrame per table entry, so equal names share storage across samples.
        let table = report.frames.indices.map { ProfileFrame.of($0, in: report) }
        func frames(_ indices: [Int]) -> [ProfileFrame] {
            indices.reversed().compactMap { table.indices.contains($0) ? table[$0] : nil }
        }
        let weight = intervalMs
        samples = report.samples.map { sample in
            var stack = frames(sample.frames)
            switch sample.kind {
            case .stack:
                if stack.isEmpty { stack = [.noStack] }
            case .syscall:
                stack.insert(.syscall(sample.syscall), at: 0)
            default:  // .none, or a kind a newer monitor wrote: counted as a sample without a stack
                stack = [.noStack]
            }
            return Sample(offsetMs: sample.offsetMs, weightMs: weight, stack: stack)
        }
        representativeStack = frames(report.representativeStack)
    }
}
