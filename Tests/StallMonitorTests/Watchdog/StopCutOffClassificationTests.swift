import Foundation
import StallMonitor
import StallReportKit
import Synchronization
import Testing

/// A spinning stall cut off by `stop()` after few samples is classified by the README's rule:
/// the larger of the CPU-time share and the share of samples in state R, however few samples.
@Suite("Classification of a stall cut off by stop()", .serialized)
struct StopCutOffClassificationTests {
    @Test(
        "a loop spinning on a CPU it shares with another spinning thread, stopped after one or two samples (all R): cpu"
    )
    func spinningStallCutOffByStopIsCPU() throws {
        let cpu = try #require(CPUPinning.firstAllowedCPU(), "no CPU in this thread's affinity mask")
        try withMonitoredLoop(
            "cut-by-stop",
            configure: { configuration in
                configuration.samplingInterval = .seconds(2)  // one sample at the start of tracking, the next far later
            }
        ) { directory, loop, monitor in
            // Both threads on one CPU: the loop gets about half of it (its CPU share stays under
            // 70 %), and is runnable (R) whenever the watchdog looks.
            let hog = CPUHog(cpu: cpu)
            defer { hog.stop() }
            let pinned = try loop.run { CPUPinning.pinCallingThread(to: cpu) }
            try #require(pinned, "could not pin the loop thread to CPU \(cpu)")
            let release = StopSpin()
            let spin = loop.perform { release.spinUntilReleased() }
            defer { release.release() }
            // Past the threshold (its inProgress report is written), then stopped mid-stall.
            let crossed = waitUntil(timeout: .seconds(20)) { monitor.statistics.inProgressWrites >= 1 }
            monitor.stop()
            release.release()
            try spin.wait(timeout: .seconds(20), what: "the spin to end")
            hog.stop()
            try #require(crossed, "the stall never crossed the threshold: \(monitor.statistics)")

            let reports = try directory.reports()
            try #require(reports.count == 1, "\(directory.entries())")
            let report = reports[0]
            #expect(report.status == .ended)
            let known = report.samples.map(\.threadState).filter { $0 != "?" }
            let share = report.cpuObservedMs > 0 ? report.mainThreadCPUMs / report.cpuObservedMs : -1
            if !known.isEmpty, known.allSatisfy({ $0 == "R" }) {
                #expect(report.classification == .cpu, "states \(known), CPU share \(share)")
            } else {
                // The watchdog read no state or saw the thread not runnable: the CPU share decides.
                #expect(
                    report.classification == (share >= 0.7 ? .cpu : share <= 0.3 && share >= 0 ? .blocked : .mixed),
                    "states \(known), CPU share \(share)")
            }
        }
    }
}

/// A spin that ends when another thread releases it.
final class StopSpin: Sendable {
    private let released = Atomic<Bool>(false)

    @inline(never)
    func spinUntilReleased() {
        while !released.load(ordering: .relaxed) {}
    }

    func release() {
        released.store(true, ordering: .relaxed)
    }
}
