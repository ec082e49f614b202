import Foundation
import Testing

/// The real `stall-stress` binary, small: monitors on several threads start, see every stall, and
/// after `stop()` leave no thread and no descriptor behind (the symbolication session is closed
/// with the last monitor). The full 2,000-stall run is `Scripts/stress`.
@Suite("stall-stress: counts exact, nothing left open after stop()")
struct StallStressEndToEndTests {
    @Test("two monitored threads, 12 stalls: every check of the stress tool passes")
    func smallStressRun() throws {
        let directory = try ReportDirectory()
        // Stalls far above the threshold and gaps far above the re-entry grace, so the expected
        // counts hold on a loaded machine and under the sanitizers too.
        let run = try StallReportCLI.run(
            [
                "--threads", "2", "--stalls", "12", "--threshold-ms", "60", "--stall-ms", "90-110",
                "--gap-ms", "20-40", "--interval-ms", "10", "--settle-seconds", "30",
                "--output", directory.url.appendingPathComponent("reports").path,
            ],
            timeout: 300, executable: "stall-stress")
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("stall-stress: all checks passed"), "\(run.stdout)")
        #expect(!run.stdout.contains("FAIL"), "\(run.stdout)")
    }
}
