import Foundation
import Glibc
import Logging
import StallMonitor
import StallReportKit
import Synchronization

/// A StallMonitor on the main loop writing into a fresh directory, with every report it wrote
/// and the monotonic time its `onReport` callback ran (the report was on disk by then).
final class MonitorSession: Sendable {
    /// One written report.
    struct Arrival: Sendable {
        var report: StallReport
        var url: URL
        /// CLOCK_MONOTONIC (ns) when `onReport` was called.
        var at: UInt64
    }

    let monitor: StallMonitor
    let directory: URL
    private let inbox: Inbox

    init(
        _ context: BenchContext, threshold: Duration = .milliseconds(250),
        samplingInterval: Duration = .milliseconds(10),
        maxSamples: Int = 200, inProgressRefresh: Duration? = nil, symbolicateInProcess: Bool = true
    ) throws {
        let directory = context.freshDirectory("reports")
        let inbox = Inbox()
        self.directory = directory
        self.inbox = inbox
        var configuration = StallMonitor.Configuration(
            threshold: threshold, reportDirectory: directory, samplingInterval: samplingInterval,
            maxSamplesPerStall: maxSamples, appVersion: "stall-bench",
            onReport: { report, url in
                let at = CStallClock.now()
                inbox.arrivals.withLock { $0.append(Arrival(report: report, url: url, at: at)) }
            })
        // Every stall gets a full report: the default rate limit would make the reports of a
        // repeated fingerprint compact (no samples), and the quota would delete old ones.
        configuration.maxReportsPerFingerprint = 1_000_000
        configuration.maxReportFiles = 1_000_000
        configuration.maxReportBytes = 1 << 40
        configuration.logger.logLevel = .notice  // no log line per report while measuring
        if let inProgressRefresh { configuration.inProgressRefresh = inProgressRefresh }
        configuration.symbolicateInProcess = symbolicateInProcess
        monitor = try StallMonitor.start(configuration)
    }

    /// Gives the watchdog time to see that the last span ended (it looks at least every sampling
    /// interval while it tracks one), then waits for the reports it queued.
    func settle() {
        usleep(60_000)
        monitor.flush(timeout: .seconds(10))
    }

    /// Reports written so far, in the order they were written.
    var arrivals: [Arrival] { inbox.arrivals.withLock { $0 } }

    /// Waits (off the loop) until the last span's end has been seen and the queued reports are
    /// on disk; then stops the monitor.
    func stop() {
        settle()
        monitor.flush(timeout: .seconds(10))
        monitor.stop()
    }
}

/// Reports delivered by `onReport`, shared between the writer queue and the benchmark.
private final class Inbox: Sendable {
    let arrivals = Mutex<[MonitorSession.Arrival]>([])
}
