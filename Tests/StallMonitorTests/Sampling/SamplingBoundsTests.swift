import Foundation
import StallMonitor
import StallReportKit
import Testing

@Suite("Deep stacks and the sample bound", .serialized)
struct SamplingBoundsTests {
    @Test("a 200-frame recursion is captured whole")
    func deepRecursionIsCaptured() throws {
        try withMonitoredLoop("deep-stack") { directory, loop, monitor in
            let depth = try loop.run { StallingWork.recurseDeeplyThenSpin(depth: 200, milliseconds: 400) }
            #expect(depth == 200)
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")

            let report = try directory.onlyReport()
            let deepest = try #require(
                report.samples.filter { $0.kind == .stack }.max { $0.frames.count < $1.frames.count })
            #expect(deepest.frames.count >= 200)
            #expect(deepest.truncated == nil)
            let symbols = report.symbols(of: deepest)
            #expect(symbols.filter { $0.contains("recurseDeeplyThenSpin") }.count >= 200)
            #expect(symbols.contains { $0.contains("spinOnCPUForStallTest") })
            #expect(report.representativeSymbols.filter { $0.contains("recurseDeeplyThenSpin") }.count >= 200)
        }
    }

    @Test("with maxSamplesPerStall 8, a 1 s stall sampled every 10 ms keeps at most 8 samples and says it thinned")
    func samplesAreBounded() throws {
        try withMonitoredLoop(
            "bounded",
            configure: { configuration in
                configuration.maxSamplesPerStall = 8
                configuration.samplingInterval = .milliseconds(10)
            }
        ) { directory, loop, monitor in
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 1_000) }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")

            let report = try directory.onlyReport()
            #expect(report.samples.count <= 8)
            #expect(report.samples.count >= 4)
            #expect(report.sampling.maxSamples == 8)
            #expect(report.sampling.thinned)
            #expect(report.sampling.dropped > 0)
            #expect(report.sampling.intervalMs == 10)
            #expect(report.sampling.effectiveIntervalMs > 10)
            // Every attempt is a kept or a dropped sample, or one discarded without a sample: finished
            // after the span ended, or of a thread that moved while its stack was copied.
            let discarded =
                (report.sampling.skipped["afterSpanEnd"] ?? 0) + (report.sampling.skipped["threadMoved"] ?? 0)
            #expect(
                report.sampling.attempted == report.samples.count + report.sampling.dropped + discarded,
                "\(report.sampling)")
            #expect(report.sampling.attempted == report.sampling.accountedFor, "\(report.sampling)")
            // The kept samples still span the stall, oldest first.
            let offsets = report.samples.map(\.offsetMs)
            #expect(offsets == offsets.sorted())
            #expect((offsets.last ?? 0) - (offsets.first ?? 0) >= 400, "\(offsets)")
        }
    }
}
