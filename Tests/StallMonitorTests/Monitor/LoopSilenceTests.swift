import Foundation
import StallMonitor
import Testing

/// A monitor whose loop never runs says so (a warning through the logger, and
/// `watchedLoops`), instead of silently watching nothing.
@Suite("A watched loop that never runs", .serialized)
struct LoopSilenceTests {
    /// A configuration writing to `directory` whose loop-silence warning comes after 300 ms, and
    /// the log it writes to.
    static func configuration(in directory: ReportDirectory) -> (StallMonitor.Configuration, CapturingLogHandler.Store)
    {
        var configuration = directory.configuration()
        let log = CapturingLogHandler.capture(&configuration)
        configuration.loopSilenceWarning = .milliseconds(300)
        return (configuration, log)
    }

    @Test("a run loop that never runs is said once, at warning level, and watchedLoops tells it")
    func silentRunLoop() throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        let (configuration, log) = Self.configuration(in: directory)
        // A thread that starts a monitor of its own run loop and then never runs it (as a program
        // whose main thread parks in dispatchMain() would).
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let box = LockedBox<StallMonitor?>(nil)
        let settings = configuration
        let thread = Thread {
            box.withLock { $0 = try? StallMonitor.start(settings, loop: .current) }
            started.signal()
            release.wait()
        }
        thread.start()
        started.wait()
        defer { release.signal() }
        let monitor = try #require(box.withLock { $0 })
        defer { monitor.stop() }
        #expect(monitor.watchedLoops.map(\.hasRun) == [false])

        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline && !log.all.contains(where: { $0.metadata["stallmonitor.problem"] == "loopNotRunning" })
        {
            Thread.sleep(forTimeInterval: 0.05)
        }
        let warnings = log.all.filter { $0.metadata["stallmonitor.problem"] == "loopNotRunning" }
        try #require(warnings.count == 1, "\(log.messages)")
        #expect(warnings[0].level == .warning)
        #expect(warnings[0].message.contains("has not run"))
        #expect(monitor.watchedLoops.map(\.kind) == ["runLoop"])
        #expect(monitor.watchedLoops.map(\.hasRun) == [false])
        #expect(monitor.statistics.errors["loopNotRunning"] == 1)
        // Said once, not again.
        Thread.sleep(forTimeInterval: 0.4)
        #expect(log.all.count { $0.metadata["stallmonitor.problem"] == "loopNotRunning" } == 1)
    }

    @Test("a run loop that runs is not said, and watchedLoops says it has run")
    func runningRunLoop() throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        let (configuration, log) = Self.configuration(in: directory)
        let loop = try MonitoredLoopThread(name: "silence-run")
        defer { _ = loop.stop() }
        let monitor = try loop.startMonitor(configuration)
        defer { monitor.stop() }
        _ = try loop.run { usleep(1_000) }
        Thread.sleep(forTimeInterval: 0.6)
        #expect(monitor.watchedLoops.map(\.hasRun) == [true])
        #expect(monitor.watchedLoops.first?.threadID == loop.tid)
        #expect(monitor.watchedLoops.first?.threadName == "silence-run")
        #expect(!log.all.contains { $0.metadata["stallmonitor.problem"] == "loopNotRunning" }, "\(log.messages)")
    }
}
