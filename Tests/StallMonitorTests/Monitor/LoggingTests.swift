import Foundation
import Logging
import StallReportModel
import Synchronization
import Testing

@testable import StallMonitor

/// What the monitor says through the host's `Logger`, and how often.
@Suite("Logging", .serialized)
struct LoggingTests {
    @Test("the default logger is labelled StallMonitor; the log interval must be positive")
    func defaults() {
        let configuration = StallMonitor.Configuration(reportDirectory: URL(fileURLWithPath: "/tmp/unused"))
        #expect(configuration.logger.label == "StallMonitor")
        #expect(configuration.logInterval == .seconds(60))
        var bad = configuration
        bad.logInterval = .zero
        #expect(throws: StallMonitorError.self) { try bad.validate() }
    }

    @Test("a repeated problem is said once per interval, then again with how often it repeated; every one is counted")
    func repeatsAreSaidOncePerInterval() {
        let (logger, log) = CapturingLogHandler.logger()
        let now = Atomic<UInt64>(1_000_000_000)
        let reporter = ErrorReporter(logger: logger, interval: .seconds(10)) { now.load(ordering: .relaxed) }
        let failure = StallMonitorError.reportWrite(path: "/reports/stall-1.json", reason: "No space left on device")
        for _ in 1...3 { reporter.report(failure) }
        reporter.report(.reportEncoding("bad float"))
        #expect(log.all.count == 2, "\(log.messages)")
        now.add(9_000_000_000, ordering: .relaxed)
        reporter.report(failure)
        #expect(log.all.count == 2, "still inside the interval")
        now.add(2_000_000_000, ordering: .relaxed)
        reporter.report(failure)
        let entries = log.all
        #expect(entries.count == 3)
        #expect(reporter.counts == ["reportWrite": 5, "reportEncoding": 1])
        guard entries.count == 3 else { return }
        #expect(entries[0].level == .info)
        #expect(entries[0].metadata["stallmonitor.problem"] == "reportWrite")
        #expect(entries[0].metadata["path"] == "/reports/stall-1.json")
        #expect(entries[0].metadata["stallmonitor.repeats"] == nil)
        #expect(entries[1].metadata["stallmonitor.problem"] == "reportEncoding" && entries[1].metadata["path"] == nil)
        #expect(entries[2].metadata["stallmonitor.repeats"] == "3", "three more since the first message")
        #expect(entries[2].message.contains("3 more since the last message"))
    }

    @Test("each report written is said at info level with its file, fingerprint and class in metadata")
    func reportsAreLogged() throws {
        let (logger, log) = CapturingLogHandler.logger()
        try withMonitoredLoop(
            "logged-stall",
            configure: { configuration in
                configuration.threshold = .milliseconds(200)
                configuration.logger = logger
            }
        ) { directory, loop, monitor in
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 500) }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            let report = try #require(try directory.reports().first)
            let stalls = log.all.filter { $0.metadata["stallmonitor.fingerprint"] != nil }
            try #require(stalls.count == 1, "\(log.messages)")
            let entry = stalls[0]
            #expect(entry.level == .info)
            #expect(entry.metadata["stallmonitor.fingerprint"] == report.fingerprint)
            #expect(entry.metadata["stallmonitor.classification"] == report.classification.rawValue)
            #expect(entry.metadata["stallmonitor.loop"] == "runLoop")
            #expect(entry.metadata["stallmonitor.thread"] == "logged-stall")
            #expect(
                entry.metadata["path"].map { $0.hasSuffix(".json") && FileManager.default.fileExists(atPath: $0) }
                    == true)
            #expect(entry.message.contains("ms stall"))
        }
    }
}
