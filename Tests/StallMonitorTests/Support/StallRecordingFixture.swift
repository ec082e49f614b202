import Foundation

@testable import StallMonitor

extension StallRecording {
    /// A recording of span `sequence` of thread 1 ("t", a RunLoop), begun at 0 and tracked from 0:
    /// threshold 250 ms, a sample every 10 ms, at most `maxSamples`, unwound with libdw.
    static func fixture(sequence: UInt64 = 1, maxSamples: Int = 4) -> StallRecording {
        StallRecording(
            thread: .init(tid: 1, name: "t", isMainThread: false, loopKind: "runLoop"), sequence: sequence,
            spanStart: 0, wallClockStart: Date(), threshold: 250_000_000, mode: nil, interval: 10_000_000,
            requestedInterval: 10_000_000, maxSamples: maxSamples, cpuAtTrackingStart: 0, trackingStart: 0,
            unwinder: SamplingUnwinder(name: "libdw", snapshot: .libdw, note: nil))
    }
}
