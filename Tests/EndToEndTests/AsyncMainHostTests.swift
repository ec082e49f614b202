import Foundation
import Testing

/// A real program with `async main` (no main RunLoop ever runs): the monitor never watches nothing
/// silently.
@Suite("async main host", .serialized)
struct AsyncMainHostTests {
    @Test("started for the main run loop from a worker thread, the monitor refuses with a clear error")
    func refusesFromAWorker() throws {
        let run = try StallReportCLI.run(["refuse"], timeout: 60, executable: "async-main-host")
        #expect(run.status == 3, "\(run)")
        #expect(run.stderr.contains("never runs RunLoop.main"), "\(run.stderr)")
        #expect(run.stderr.contains("async main"))
        #expect(!run.stdout.contains("started"))
    }

    @Test("started on the main thread before it parks, the monitor warns that its loop never ran")
    func warnsWhenTheLoopNeverRuns() throws {
        let run = try StallReportCLI.run(["silent"], timeout: 60, executable: "async-main-host")
        #expect(run.status == 0, "\(run)")
        let warnings = run.stderr.split(separator: "\n").filter { $0.contains("warning") && $0.contains("loopNotRunning") }
        #expect(warnings.count == 1, "\(run.stderr)")
        #expect(run.stdout.contains("hasRun [false]"), "\(run.stdout)")
    }
}
