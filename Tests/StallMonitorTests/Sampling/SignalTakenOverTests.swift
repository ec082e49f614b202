import Foundation
import Glibc
import StallMonitor
import StallReportKit
import Synchronization
import Testing

/// How often the host's own handler of the monitor's signal ran.
private let hostHandlerRuns = Atomic<Int>(0)

/// The host's own handler, installed over the monitor's after start.
private func hostHandler(_ signal: Int32) {
    hostHandlerRuns.add(1, ordering: .relaxed)
}

/// A host that takes the sampling signal over after start (its own handler, SIG_IGN, SIG_DFL):
/// the monitor never sends it, says so once, and still takes blocked threads' stacks.
@Suite("The host takes the sampling signal over", .serialized)
struct SignalTakenOverTests {
    /// Replaces the disposition of `signal` with `handler` (`SIG_IGN`, `SIG_DFL` or a function);
    /// returns the action it replaced.
    private static func take(_ signal: Int32, _ handler: __sighandler_t?) -> sigaction {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = handler
        sigemptyset(&action.sa_mask)
        var previous = sigaction()
        sigaction(signal, &action, &previous)
        return previous
    }

    private static func restore(_ signal: Int32, _ previous: sigaction) {
        var action = previous
        sigaction(signal, &action, nil)
    }

    /// Spins on the loop until the monitor has said that its signal was taken over and the stall
    /// is past the threshold (its inProgress report written), at most 20 s.
    private static func spinUntilSaid(_ loop: MonitoredLoopThread, _ monitor: StallMonitor) throws -> Bool {
        let said = StopSpin()
        let inProgressBefore = monitor.statistics.inProgressWrites
        let spin = loop.perform { said.spinUntilReleased() }
        let seen = waitUntil(timeout: .seconds(20)) {
            let statistics = monitor.statistics
            return statistics.errors["signalTakenOver"] != nil && statistics.inProgressWrites > inProgressBefore
        }
        said.release()
        try spin.wait(timeout: .seconds(20), what: "the spin to end")
        return seen
    }

    @Test(
        "the host's own handler: never run by the monitor, said once; blocked stacks still taken; sampling resumes when ours is back"
    )
    func hostHandlerIsNeverSignalled() throws {
        let (logger, log) = CapturingLogHandler.logger()
        try withMonitoredLoop("signal-host", configure: { $0.logger = logger }) { directory, loop, monitor in
            let signal = monitor.signal
            hostHandlerRuns.store(0, ordering: .relaxed)
            let ours = Self.take(signal, hostHandler)
            var restored = false
            defer { if !restored { Self.restore(signal, ours) } }
            #expect(!Kernel.samplingHandlerInstalled)

            // A CPU stall, then a blocked one, while the host's handler is installed.
            #expect(try Self.spinUntilSaid(loop, monitor), "\(monitor.statistics)")
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            try loop.run { StallingWork.sleepInUsleepUntilElapsed(milliseconds: 500) }
            #expect(monitor.waitForStalls(2), "\(monitor.statistics)")
            #expect(hostHandlerRuns.load(ordering: .relaxed) == 0, "the monitor sent its signal to the host's handler")
            #expect(monitor.statistics.errors["signalTakenOver"] == 1, "\(monitor.statistics.errors)")
            #expect(log.messages.filter { $0.contains("sampling signal taken over") }.count == 1, "\(log.messages)")

            let reports = try directory.reports()
            try #require(reports.count == 2, "\(directory.entries())")
            let (spinning, blocked) = (reports[0], reports[1])
            #expect((spinning.sampling.skipped["signalTakenOver"] ?? 0) >= 1, "\(spinning.sampling)")
            #expect(!spinning.samples.contains { $0.interrupted == true }, "\(spinning.samples)")
            #expect(spinning.sampling.timedOut == 0)
            #expect(
                blocked.samples.contains { $0.kind == .stack && $0.interrupted == false },
                "\(blocked.samples.map(\.kind))")
            #expect(blocked.anySampleNames("sleepInUsleepUntilElapsed"))

            // Our handler back: running threads are sampled again.
            Self.restore(signal, ours)
            restored = true
            #expect(Kernel.samplingHandlerInstalled)
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 600) }
            #expect(monitor.waitForStalls(3), "\(monitor.statistics)")
            let again = try directory.reports()
            try #require(again.count == 3, "\(directory.entries())")
            #expect(again[2].samples.contains { $0.interrupted == true }, "\(again[2].sampling)")
            #expect(hostHandlerRuns.load(ordering: .relaxed) == 0)
        }
    }

    @Test("SIG_IGN set by the host: nothing is sent (no sample times out); stop() leaves the host's SIG_IGN alone")
    func ignoredSignalIsNotSent() throws {
        try withMonitoredLoop("signal-ign") { directory, loop, monitor in
            let signal = monitor.signal
            let ours = Self.take(signal, SIG_IGN)
            var stopped = false
            defer {
                // Before stop(): our handler back, for stop() to restore the disposition before start.
                // After it: the disposition before start (SIG_DFL: the monitor picked a free signal).
                if stopped { _ = Self.take(signal, SIG_DFL) } else { Self.restore(signal, ours) }
            }

            #expect(try Self.spinUntilSaid(loop, monitor), "\(monitor.statistics)")
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            let reports = try directory.reports()
            try #require(reports.count == 1, "\(directory.entries())")
            #expect(reports[0].sampling.timedOut == 0, "a signal was sent: \(reports[0].sampling)")
            #expect((reports[0].sampling.skipped["signalTakenOver"] ?? 0) >= 1, "\(reports[0].sampling)")

            monitor.stop()
            stopped = true
            var now = sigaction()
            sigaction(signal, nil, &now)
            #expect(
                unsafeBitCast(now.__sigaction_handler.sa_handler, to: Int.self) == 1,
                "stop() replaced the host's SIG_IGN")
        }
    }

    @Test(
        "SIG_DFL set by the host (whose action for a real-time signal would kill the process): a CPU stall is still reported, the process lives"
    )
    func defaultActionIsNeverSent() throws {
        try withMonitoredLoop("signal-dfl") { directory, loop, monitor in
            let signal = monitor.signal
            let ours = Self.take(signal, SIG_DFL)
            defer { Self.restore(signal, ours) }
            #expect(!Kernel.samplingHandlerInstalled)

            #expect(try Self.spinUntilSaid(loop, monitor), "\(monitor.statistics)")
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            let reports = try directory.reports()
            try #require(reports.count == 1, "\(directory.entries())")
            #expect(!reports[0].samples.contains { $0.interrupted == true })
            #expect(monitor.statistics.errors["signalTakenOver"] == 1, "\(monitor.statistics.errors)")
        }
    }
}
