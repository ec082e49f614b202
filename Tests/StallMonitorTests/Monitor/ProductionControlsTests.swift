import Foundation
import StallMonitor
import StallReportKit
import Testing

/// Known long work is not a stall: pause()/resume(), expectLongWork {}; and the scene tag.
@Suite("Production: pause, expectLongWork and scene", .serialized)
struct ProductionControlsTests {
    @Test("a stall while paused is not reported and counts as expected long work; after resume stalls are reported")
    func pauseAndResume() throws {
        try withMonitoredLoop("pause-resume") { directory, loop, monitor in
            monitor.pause()
            monitor.pause()  // nests
            monitor.resume()
            let paused = try loop.run { measureMilliseconds { StallingWork.spinOnCPUForStallTest(milliseconds: 900) } }
            #expect(paused >= 900)
            #expect(waitUntil { monitor.statistics.expectedLongWork == 1 }, "\(monitor.statistics)")
            monitor.resume()

            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 350) }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            let statistics = monitor.statistics
            #expect(statistics.stallsDetected == 1)
            #expect(statistics.expectedLongWork == 1)
            let reports = try directory.reports()
            try #require(reports.count == 1)
            // The reported stall is the 350 ms one, not the 900 ms paused one.
            #expect(
                reports[0].durationMs >= 350 && reports[0].durationMs < 900,
                "the paused stall must not be reported: \(reports[0].durationMs)")
        }
    }

    @Test("an extra resume() does nothing: the next pause() still pauses; whilePaused {} pauses its body only")
    func extraResumeAndScopedPause() throws {
        try withMonitoredLoop("pause-extra") { directory, loop, monitor in
            monitor.pause()
            #expect(monitor.resume())
            #expect(!monitor.resume(), "nothing to undo")
            monitor.pause()
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 400) }
            #expect(
                waitUntil { monitor.statistics.expectedLongWork == 1 },
                "the pause after an extra resume must hold: \(monitor.statistics)")
            #expect(monitor.resume())

            let result = try loop.run {
                monitor.whilePaused { () -> Int in
                    StallingWork.spinOnCPUForStallTest(milliseconds: 400)
                    return 7
                }
            }
            #expect(result == 7)
            #expect(waitUntil { monitor.statistics.expectedLongWork == 2 }, "\(monitor.statistics)")
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 350) }
            #expect(monitor.waitForStalls(1), "after whilePaused the monitor reports again: \(monitor.statistics)")
            #expect(monitor.statistics.stallsDetected == 1)
            #expect(try directory.reports().count == 1)
        }
    }

    @Test("pausing during a stall whose inProgress report is on disk removes that report")
    func pauseRetractsInProgressReport() throws {
        try withMonitoredLoop("pause-retract") { directory, loop, monitor in
            let stall = loop.perform { StallingWork.spinOnCPUForStallTest(milliseconds: 1_000) }
            let announced = waitUntil(timeout: .seconds(3)) { !directory.reportFiles().isEmpty }
            #expect(announced, "no inProgress report during the stall")
            monitor.pause()
            try stall.wait()
            #expect(waitUntil { monitor.statistics.expectedLongWork == 1 }, "\(monitor.statistics)")
            monitor.flush()
            monitor.resume()
            #expect(directory.reportFiles().isEmpty, "\(directory.entries())")
            #expect(monitor.statistics.stallsDetected == 0)
        }
    }

    @Test("expectLongWork {} is not reported and counts; the same work outside it is; its result is returned")
    func expectLongWork() throws {
        try withMonitoredLoop("long-work") { directory, loop, monitor in
            for round in 1...2 {
                let value = try loop.run {
                    monitor.expectLongWork { () -> Int in
                        StallingWork.spinOnCPUForStallTest(milliseconds: 400)
                        return 42
                    }
                }
                #expect(value == 42)
                #expect(waitUntil { monitor.statistics.expectedLongWork == round }, "\(monitor.statistics)")
            }
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 350) }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            let statistics = monitor.statistics
            #expect(statistics.stallsDetected == 1)
            #expect(statistics.expectedLongWork == 2)
            #expect(try directory.reports().count == 1)
        }
    }

    @Test("the scene set when a stall begins is copied into its report; cleared, reports have none")
    func sceneIsCopied() throws {
        try withMonitoredLoop("scene") { directory, loop, monitor in
            monitor.scene = "checkout/payment"
            #expect(monitor.scene == "checkout/payment")
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 320) }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            monitor.scene = nil
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 320) }
            #expect(monitor.waitForStalls(2), "\(monitor.statistics)")

            let reports = try directory.reports()
            try #require(reports.count == 2)
            #expect(reports.map(\.scene) == ["checkout/payment", nil])
        }
    }
}
