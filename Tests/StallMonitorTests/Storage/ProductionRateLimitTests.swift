import Foundation
import StallMonitor
import StallReportKit
import Testing

/// One fingerprint stalling again and again does not flood the store, and counts stay exact.
@Suite("Production: per-fingerprint rate limit", .serialized)
struct ProductionRateLimitTests {
    @Test("with maxReportsPerFingerprint 2, four identical stalls give 2 full and 2 compact reports with exact fields")
    func fourIdenticalStalls() throws {
        try withMonitoredLoop(
            "rate-limit",
            configure: { configuration in
                configuration.maxReportsPerFingerprint = 2
                configuration.rateLimitWindow = .seconds(600)
            }
        ) { directory, loop, monitor in
            // One closure, one call site: the same in-app frames every time.
            let stall: @Sendable () -> Double = {
                measureMilliseconds { ProductionWork.spinWithoutCallsForRateLimit(milliseconds: 320) }
            }
            var measured: [Double] = []
            for count in 1...4 {
                measured.append(try loop.run(stall))
                #expect(monitor.waitForStalls(count), "\(monitor.statistics)")
            }

            let reports = try directory.reports()  // file names sort by time
            try #require(reports.count == 4, "\(directory.entries())")
            #expect(Set(reports.map(\.fingerprint)).count == 1, "\(reports.map(\.representativeSymbols))")
            for (report, milliseconds) in zip(reports, measured) {
                #expect(report.status == .ended)
                #expect(
                    durationCovers(report.durationMs, measured: milliseconds),
                    "report \(report.durationMs) ms, measured \(milliseconds) ms")
            }
            for full in reports.prefix(2) {
                #expect(full.rateLimited != true)
                #expect(!full.samples.isEmpty)
                #expect(full.omittedSamples == nil)
            }
            for compact in reports.suffix(2) {
                #expect(compact.rateLimited == true)
                #expect(compact.samples.isEmpty)
                #expect((compact.omittedSamples ?? 0) > 0)
                #expect(!compact.representativeStack.isEmpty)
                #expect(compact.representativeStack.allSatisfy { compact.frames.indices.contains($0) })
                #expect(
                    compact.frames.allSatisfy { frame in frame.image.map { compact.images.indices.contains($0) } ?? true
                    })
                #expect(
                    compact.representativeSymbols.contains { $0.contains("spinWithoutCallsForRateLimit") },
                    "\(compact.representativeSymbols)")
                #expect(compact.sampling.attempted > 0)
            }
            // The compact form keeps the full form's stack: the same stall, so the same chain of
            // callers from the spinning function down. Above it, the leaf may differ from stall to
            // stall (where most samples fell: the loop body, or in a debug build the range iterator
            // it calls, or the sanitizer runtime), as it does between two full reports.
            let callers = { (report: StallReport) in
                Array(
                    report.representativeSymbols.filter { !Fingerprint.isIgnored($0) }
                        .drop { !$0.contains("spinWithoutCallsForRateLimit") })
            }
            #expect(!callers(reports[0]).isEmpty)
            #expect(callers(reports[2]) == callers(reports[0]))

            let statistics = monitor.statistics
            #expect(statistics.stallsDetected == 4)
            #expect(statistics.reportsWritten == 4)
            #expect(statistics.reportsRateLimited == 2)
            #expect(statistics.errors.isEmpty)

            // What stallreport reads: all four counted, none lost, under one fingerprint.
            let collection = ReportCollector().read(files: directory.reportFiles().map(\.path))
            #expect(collection.reportsRead == 4)
            #expect(collection.groups.count == 1)
            #expect(collection.groups.values.first?.count == 4)
        }
    }
}
