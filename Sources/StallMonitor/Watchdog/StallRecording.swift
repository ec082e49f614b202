import Foundation
import StallReportModel
import Synchronization

/// One observation of the stuck thread, before symbolication.
struct RawSample {
    /// Nanoseconds from the span start.
    var offset: UInt64
    var kind: StallReport.Sample.Kind
    var threadState: SchedulerState
    var syscall: String?
    var note: String?
    /// Instruction pointers, leaf first. For `stack` samples the first is the interrupted PC (or
    /// the syscall's return PC) and the rest are return addresses; for `syscall` samples the one
    /// PC from `/proc`.
    var addresses: [UInt]
    var truncated: Bool
    /// For `stack` samples: which unwinder made the stack (`libdw`, `libunwind`), and whether the
    /// thread was interrupted by the sampling signal (false: asleep in the kernel, unwound from
    /// a copy of its frozen stack).
    var unwinder: UnwinderName? = nil
    var interrupted: Bool? = nil
    /// For `stack` samples of a thread that ran a task: its async callers (``AsyncCallChainReader``).
    var asyncChain: AsyncCallChain? = nil
}

/// Everything the watchdog learned about one stall, handed to the writer.
struct StallRecording {
    /// Identifies the stall across its in-progress snapshots and its final report.
    var stallID = StallID.next()
    var thread: MonitoredThread.Identity
    var sequence: UInt64
    var spanStart: UInt64
    var wallClockStart: Date
    var threshold: UInt64
    var mode: String?
    var end: UInt64 = 0
    var passes = 0
    var longestPass: UInt64 = 0
    var samples: [RawSample] = []
    var interval: UInt64
    var requestedInterval: UInt64
    var maxSamples: Int
    var attempted = 0
    var taken = 0
    var timedOut = 0
    /// Attempts that gave no stack, by why.
    var skipped: [SkipReason: Int] = [:]
    var thinned = false
    var dropped = 0
    /// Thread CPU time and monotonic time when tracking began and when it ended.
    var cpuAtTrackingStart: Int64
    var trackingStart: UInt64
    var cpuAtTrackingEnd: Int64 = -1
    var trackingEnd: UInt64 = 0
    var unwinder: SamplingUnwinder
    var scene: String?
    /// Time the whole process was stopped during the span (the watchdog woke far too late).
    var stoppedNanos: UInt64 = 0
    /// ``SuspendClock`` when tracking began, and how much the machine was suspended since.
    var suspendedAtTrackingStart: UInt64 = 0
    var machineSuspendedNanos: UInt64 = 0
    /// Declared expected long work, or the monitor was paused: never reported.
    var suppressed = false
    /// When the last in-progress snapshot was handed to the writer (0: none yet).
    var lastSnapshotAt: UInt64 = 0
    /// Only for a starved concurrency pool (its samples are its workers' stacks).
    var starvation: StallReport.Starvation?
    /// Why async callers were not read for samples that ran in a task, with how many samples.
    var asyncChainOmissions: [String: Int] = [:]

    /// Notes how long the machine was suspended since tracking began, from ``SuspendClock``'s
    /// value `now` (it never goes back).
    mutating func noteMachineSuspended(now: UInt64) {
        machineSuspendedNanos = now > suspendedAtTrackingStart ? now - suspendedAtTrackingStart : 0
    }

    /// Adds a sample, thinning to an evenly spread half (and doubling the interval) at the bound.
    mutating func append(_ sample: RawSample) {
        if samples.count >= maxSamples {
            let kept = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
            dropped += samples.count - kept.count
            samples = kept
            interval *= 2
            thinned = true
        }
        samples.append(sample)
    }

    /// Counts an attempt that gave no stack.
    mutating func skip(_ reason: SkipReason) {
        skipped[reason, default: 0] += 1
    }
}

/// Identifies one stall between the watchdog and the writer, unique in the process. (A counter,
/// not a `UUID`: nothing outside the process sees it, and the writer's table keyed by it is made
/// when the monitor starts, where `UUID`'s metadata and conformances would add a block of
/// FoundationEssentials' pages to an idle host's RSS.)
struct StallID: Hashable, Sendable {
    private static let last = Atomic<UInt64>(0)
    let value: UInt64

    /// A stall ID not handed out before in this process.
    static func next() -> StallID {
        StallID(value: last.add(1, ordering: .relaxed).newValue)
    }
}
