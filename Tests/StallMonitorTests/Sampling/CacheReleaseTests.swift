import Foundation
@testable import StallMonitor
import StallReportKit
import Testing

/// libdw's sessions (CFI and DWARF caches, mapped debug files) are released once stalls have
/// been quiet for `releaseCachesAfter`, and the next stall opens them again, fully symbolicated.
@Suite("Cache release after a quiet period", .serialized)
struct CacheReleaseTests {
    @Test("the libdw sessions close after the quiet period; a stall right after, and one later, are still unwound and named with file:line")
    func releasedThenReopened() throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        let loop = try MonitoredLoopThread(name: "cache-release")
        defer { loop.stop() }
        var configuration = directory.configuration()
        configuration.releaseCachesAfter = .milliseconds(300)
        let monitor = try loop.startMonitor(configuration)
        defer { monitor.stop() }

        for round in 1...3 {
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 600) }
            #expect(monitor.waitForStalls(round), "\(monitor.statistics)")
            // The stall's report was written with both sessions open; quiet now, they close.
            #expect(waitUntil(timeout: .seconds(20)) { !SnapshotUnwinder.shared.isOpen && !Symbolicator.shared.isOpen },
                    "round \(round): the sessions were not released within 20 s")
            try #require(try directory.reports().count == round)
        }
        let reports = try directory.reports()
        try #require(reports.count == 3)
        for report in reports {
            #expect(report.symbolication.symbolicator == "libdw")
            #expect(report.anySampleNames("spinOnCPUForStallTest"), "\(report.representativeSymbols)")
            let named = report.representativeStack.map { report.frames[$0] }.first { ($0.symbol ?? "").contains("spinOnCPUForStallTest") }
            #expect(named?.file?.hasSuffix("StallingWork.swift") == true && (named?.line ?? 0) > 0,
                    "file:line from DWARF line tables after a reopen: \(String(describing: named))")
            #expect(report.samples.contains { $0.unwinder == "libdw" && $0.kind == .stack })
        }
    }

    @Test("nothing is released while a session is in use more recently than the quiet period")
    func notReleasedWhileRecent() throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        let loop = try MonitoredLoopThread(name: "cache-recent")
        defer { loop.stop() }
        let monitor = try loop.startMonitor(directory.configuration())  // default: 30 s
        defer { monitor.stop() }
        try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 600) }
        #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
        #expect(SnapshotUnwinder.shared.isOpen)
        #expect(!CacheRelease.releaseIfQuiet(for: 30_000_000_000), "used less than 30 s ago")
        #expect(SnapshotUnwinder.shared.isOpen)
        #expect(CacheRelease.releaseIfQuiet(for: 0, now: monotonicNow() + 1), "used before now")
        #expect(!SnapshotUnwinder.shared.isOpen && !Symbolicator.shared.isOpen)
    }

    @Test("the symbolication session of a binary with large DWARF (this test bundle) is closed after its batch; the names stay cached")
    func symbolicationSessionBounded() throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        let loop = try MonitoredLoopThread(name: "cache-bound")
        defer { loop.stop() }
        let monitor = try loop.startMonitor(directory.configuration())  // quiet release: 30 s
        defer { monitor.stop() }
        for round in 1...2 {
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 500) }
            #expect(monitor.waitForStalls(round), "\(monitor.statistics)")
            #expect(!Symbolicator.shared.isOpen, "DWARF caches of this test bundle grow the process past \(Symbolicator.sessionGrowthLimit) bytes")
        }
        let reports = try directory.reports()
        try #require(reports.count == 2)
        for report in reports {
            #expect(report.symbolication.symbolicator == "libdw")
            let named = report.representativeStack.map { report.frames[$0] }.first { ($0.symbol ?? "").contains("spinOnCPUForStallTest") }
            #expect(named?.file?.hasSuffix("StallingWork.swift") == true, "\(String(describing: named))")
        }
    }

    @Test("releaseCachesAfter below 10 ms is rejected")
    func validation() {
        var configuration = ReportDirectory().configuration()
        configuration.releaseCachesAfter = .milliseconds(1)
        #expect(throws: StallMonitorError.self) { try configuration.validate() }
    }
}
