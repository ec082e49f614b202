import Foundation
import StallReportKit

extension ReportFixtures {
    /// A blocked stall of a thread of the Swift concurrency pool in the process `App` (pid 7),
    /// built from the frames, stacks and samples a test of async callers gives: the sampling
    /// counts are the samples', the loop's longest pass is the stall.
    public static func poolStall(
        durationMs: Double, thresholdMs: Double, threadName: String, frames: [StallReport.Frame],
        representativeStack: [Int], representativeAsyncCallers: [Int]?, samples: [StallReport.Sample] = [],
        images: [StallReport.Image] = []
    ) -> StallReport {
        StallReport(
            id: "1", fingerprint: "0", status: .ended, startedAt: Date(), durationMs: durationMs,
            thresholdMs: thresholdMs, classification: .blocked,
            mainThreadCPUMs: 0, cpuObservedMs: 400,
            loop: .init(
                kind: "concurrencyPool", threadName: threadName, threadID: 7, isMainThread: false, mode: nil,
                passes: 1, longestPassMs: durationMs),
            process: .init(
                pid: 7, executableName: "App", executablePath: "/App", appVersion: nil, hostName: "h", os: "Linux",
                osVersion: "6", architecture: "x86_64"),
            sampling: .init(
                unwinder: "libdw", unwinderNote: nil, intervalMs: 10, effectiveIntervalMs: 10, maxSamples: 10,
                attempted: samples.count, taken: samples.count,
                timedOut: 0, skipped: [:], thinned: false, dropped: 0),
            samples: samples, representativeStack: representativeStack, frames: frames, images: images,
            symbolication: .init(symbolicator: "libdw", note: nil),
            representativeAsyncCallers: representativeAsyncCallers)
    }
}
