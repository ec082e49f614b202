import Foundation

/// The samples of one stall as weighted stacks, with the facts exports and viewers need.
///
/// Every sample of the report takes part, whatever its kind, weighted by the report's effective
/// sampling interval (`sampling.effectiveIntervalMs`), so the weights of a stall add up to its
/// sampled time: samples × interval. A `stack` sample is its logical stack (its frames, or where
/// it carries async callers, the frames of the task's current job and then the async callers:
/// `StallReport/Sample/logicalFrames(in:)`); a `syscall` sample is a
/// synthetic `[syscall NAME, not unwound]` root above the frame of its program counter; a `none`
/// sample (or any sample with no frame) is the synthetic `[no stack]` frame. Frames of the
/// monitor's own code (`StallReport/Frame/monitor`: an interposer such as `epoll_wait`) are left
/// out, as the report's identity leaves them out, so a debug and a release build of the same code
/// give the same stacks.
@dynamicMemberLookup
public struct StallProfile: Sendable {
    /// One weighted stack.
    public struct Sample: Sendable, Equatable {
        /// Milliseconds from the stall's start.
        public var offsetMs: Double
        /// Time this sample stands for, in milliseconds.
        public var weightMs: Double
        /// The stack, root first.
        public var stack: [ProfileFrame]

        /// A sample of `stack` at `offsetMs` weighing `weightMs`.
        package init(offsetMs: Double, weightMs: Double, stack: [ProfileFrame]) {
            self.offsetMs = offsetMs
            self.weightMs = weightMs
            self.stack = stack
        }
    }

    /// Which stall, who stalled, when, for how long, and the weight of each sample.
    public var facts: StallFacts
    /// Threshold the stall crossed, in milliseconds.
    package var thresholdMs: Double
    /// Ended, in progress or fatal.
    public var status: StallStatus
    /// CPU time the stuck thread used, in milliseconds.
    package var mainThreadCPUMs: Double
    /// Executable name.
    package var executableName: String
    /// The weighted samples, oldest first.
    public var samples: [Sample]
    /// The representative stack, root first.
    public var representativeStack: [ProfileFrame]

    /// Total weight of the samples: samples × effective interval, in milliseconds.
    package var sampledMs: Double { samples.reduce(0) { $0 + $1.weightMs } }

    /// A fact of the stall (`profile.fingerprint`, `profile.intervalMs`, …).
    public subscript<Value>(dynamicMember keyPath: KeyPath<StallFacts, Value>) -> Value { facts[keyPath: keyPath] }

    /// Reduces a decoded report to its profile.
    package init(report: StallReport, path: String) {
        facts = StallFacts(report: report, path: path)
        thresholdMs = report.thresholdMs
        status = report.status
        mainThreadCPUMs = report.mainThreadCPUMs
        executableName = report.process.executableName
        let weight = facts.intervalMs
        var samples: [Sample] = []
        samples.reserveCapacity(report.samples.count)
        Self.forEachStack(of: report) { sample, stack in
            samples.append(Sample(offsetMs: sample.offsetMs, weightMs: weight, stack: stack))
        }
        self.samples = samples
        let table = report.frames.indices.map {
            report.frames[$0].isMonitorCode ? nil : ProfileFrame.of($0, in: report)
        }
        representativeStack = report.representativeLogicalStack.reversed().compactMap {
            table.indices.contains($0) ? table[$0] : nil
        }
    }

    /// Reduces a decoded report to its profile without the samples' stacks: every sample keeps
    /// its time and weight (so ``sampledMs`` and the count are right) but an empty stack. For
    /// exports that describe each stall as a whole (a Chrome trace), whatever its samples.
    package init(withoutStacksOf report: StallReport, path: String) {
        var header = report
        header.samples = []  // copy on write: the samples' storage is not copied
        self.init(report: header, path: path)
        let weight = facts.intervalMs
        samples = report.samples.map { Sample(offsetMs: $0.offsetMs, weightMs: weight, stack: []) }
    }

    /// Calls `body` with each sample of `report` and its stack as a profile has it (root first),
    /// oldest first, without keeping them: a call tree of a million samples needs no profile.
    /// The monitor's own frames are left out unless `includingMonitorFrames`.
    package static func forEachStack(
        of report: StallReport, includingMonitorFrames: Bool = false,
        _ body: (StallReport.Sample, [ProfileFrame]) -> Void
    ) {
        // One ProfileFrame per table entry, so equal names share storage across samples; nil for
        // a frame left out.
        let table = report.frames.indices.map { index in
            !includingMonitorFrames && report.frames[index].isMonitorCode ? nil : ProfileFrame.of(index, in: report)
        }
        func frames(_ indices: some Sequence<Int>) -> [ProfileFrame] {
            var frames: [ProfileFrame] = []
            frames.reserveCapacity(indices.underestimatedCount)
            for index in indices where table.indices.contains(index) {
                if let frame = table[index] { frames.append(frame) }
            }
            frames.reverse()
            return frames
        }
        // Samples of a stall repeat few stacks: equal ones share one array (up to a bound).
        var known: [StackKey: [ProfileFrame]] = [:]
        for sample in report.samples {
            let key = StackKey(
                kind: sample.kind, frames: sample.frameIndices, syscall: sample.syscall,
                asyncCallers: sample.asyncCallers, asyncJobFrames: sample.asyncJobFrames)
            if let stack = known[key] {
                body(sample, stack)
                continue
            }
            let hasCallers = sample.kind == .stack && !(sample.asyncCallers?.isEmpty ?? true)
            var stack = hasCallers ? frames(sample.logicalFrames(in: report.frames)) : frames(sample.frameIndices)
            switch sample.kind {
            case .stack:
                if stack.isEmpty { stack = [.noStack] }
            case .syscall:
                stack.insert(.syscall(sample.syscall), at: 0)
            default:  // .none, or a kind a newer monitor wrote: counted as a sample without a stack
                stack = [.noStack]
            }
            if known.count < Self.sharedStacks { known[key] = stack }
            body(sample, stack)
        }
    }

    /// Distinct stacks ``forEachStack(of:_:)`` remembers for sharing.
    static let sharedStacks = 4096

    /// What a sample's profile stack is made of.
    private struct StackKey: Hashable {
        var kind: StallReport.Sample.Kind
        var frames: FrameIndices
        var syscall: String?
        var asyncCallers: [Int]?
        var asyncJobFrames: Int?
    }
}
