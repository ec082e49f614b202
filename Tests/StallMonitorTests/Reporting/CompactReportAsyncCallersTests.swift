import Foundation
import StallReportModel
import Testing

@testable import StallMonitor

/// A rate-limited (compact) report keeps its representative async callers, remapped to the frames
/// it keeps.
@Suite("Compact reports and async callers")
struct CompactReportAsyncCallersTests {
    @Test("the representative async callers survive compaction and name the same frames")
    func callersAreRemapped() {
        let frames = (0..<6).map { index in
            StallReport.Frame(
                address: "0x\(1000 + index)", image: 0, symbol: "f\(index)", offset: 0, file: nil, line: nil,
                inApp: true)
        }
        let report = StallReport(
            id: "1", fingerprint: "0", status: .ended, startedAt: Date(), durationMs: 400, thresholdMs: 250,
            classification: .blocked,
            mainThreadCPUMs: 0, cpuObservedMs: 400,
            loop: .init(
                kind: "concurrencyPool", threadName: "w", threadID: 7, isMainThread: false, mode: nil, passes: 1,
                longestPassMs: 400),
            process: .init(
                pid: 7, executableName: "App", executablePath: "/App", appVersion: nil, hostName: "h", os: "Linux",
                osVersion: "6", architecture: "x86_64"),
            sampling: .init(
                unwinder: "libdw", unwinderNote: nil, intervalMs: 10, effectiveIntervalMs: 10, maxSamples: 10,
                attempted: 1, taken: 1,
                timedOut: 0, skipped: [:], thinned: false, dropped: 0),
            samples: [.init(offsetMs: 0, kind: .stack, threadState: "S", frames: [0, 2], asyncCallers: [5, 3])],
            representativeStack: [0, 2], frames: frames,
            images: [.init(path: "/App", loadAddress: "0x0", loadBias: "0x0", buildID: nil, isMainExecutable: true)],
            symbolication: .init(symbolicator: "libdw", note: nil), representativeAsyncCallers: [5, 3])
        let compact = report.compacted()
        #expect(compact.samples.isEmpty)
        #expect(compact.frames.count == 4)
        #expect(compact.representativeStack.map { compact.frames[$0].symbol } == ["f0", "f2"])
        #expect(compact.representativeAsyncCallers?.map { compact.frames[$0].symbol } == ["f5", "f3"])
    }
}
