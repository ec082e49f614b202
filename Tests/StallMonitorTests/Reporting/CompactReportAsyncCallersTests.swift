import Foundation
import StallReportKitTestSupport
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
        let report = ReportFixtures.poolStall(
            durationMs: 400, thresholdMs: 250, threadName: "w", frames: frames, representativeStack: [0, 2],
            representativeAsyncCallers: [5, 3],
            samples: [.init(offsetMs: 0, kind: .stack, threadState: "S", frames: [0, 2], asyncCallers: [5, 3])],
            images: [.init(path: "/App", loadAddress: "0x0", loadBias: "0x0", buildID: nil, isMainExecutable: true)])
        let compact = report.compacted()
        #expect(compact.samples.isEmpty)
        #expect(compact.frames.count == 4)
        #expect(compact.representativeStack.map { compact.frames[$0].symbol } == ["f0", "f2"])
        #expect(compact.representativeAsyncCallers?.map { compact.frames[$0].symbol } == ["f5", "f3"])
    }
}
