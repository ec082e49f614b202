import Foundation
import StallReportKit
import Testing

/// The real `idle-work-demo` binary: the same work directly on the main loop and through an
/// IdleWorkQueue, with the monitor watching both.
@Suite("idle-work-demo end to end", .serialized)
struct IdleWorkDemoTests {
    private struct Result: Decodable {
        var mode: String
        var items: Int
        var completionMs: Double
        var stalls: Int
        var reports: Int
        var longestStallMs: Double
        var timerFires: Int
        var timerLatenessMaxMs: Double
        var idlePasses: Int
    }

    @Test(
        "direct work stalls the loop and delays its timer; the idle queue does the same work with no stall and a timer on time"
    )
    func idleQueueRemovesTheStall() throws {
        let directory = try ReportDirectory()
        let reports = directory.url.appendingPathComponent("idle-work")
        let run = try StallReportCLI.run(
            ["--output", reports.path, "--items", "50", "--item-ms", "10", "--threshold-ms", "300", "--json"],
            timeout: 120, executable: "idle-work-demo")
        #expect(run.status == 0, "\(run)")
        let results = try JSONDecoder().decode([String: Result].self, from: Data(run.stdout.utf8))
        let direct = try #require(results["direct"])
        let idle = try #require(results["idleQueue"])

        // 500 ms of work in one go: at least one stall of at least the threshold, reported.
        #expect(direct.stalls >= 1 && direct.reports == direct.stalls, "\(direct)")
        #expect(direct.longestStallMs >= 300, "\(direct)")
        #expect(direct.completionMs >= 500)
        // The same work through the queue: one item per pass (10 ms > 4 ms budget), no stall.
        #expect(idle.stalls == 0 && idle.reports == 0, "\(idle)")
        #expect(idle.idlePasses == 50)
        #expect(idle.completionMs >= 500)
        // The probe timer: held up by the whole backlog directly, by about one item through the queue.
        #expect(direct.timerLatenessMaxMs >= 300, "\(direct)")
        #expect(idle.timerLatenessMaxMs < direct.timerLatenessMaxMs, "\(idle) vs \(direct)")
        #expect(idle.timerFires > direct.timerFires, "\(idle) vs \(direct)")

        // The reports on disk are the direct run's, and they read back.
        let files = try FileManager.default.contentsOfDirectory(atPath: reports.path).filter { $0.hasSuffix(".json") }
        #expect(files.count == direct.reports, "\(files)")
        for file in files {
            let report = try StallReport.decode(from: Data(contentsOf: reports.appendingPathComponent(file)))
            #expect(report.durationMs >= 300)
        }
    }

    @Test("bad arguments are refused with a usage error")
    func badArguments() throws {
        let run = try StallReportCLI.run(["--items", "0"], executable: "idle-work-demo")
        #expect(run.status == 64, "\(run)")
        #expect(run.stderr.contains("--items"))
    }
}
