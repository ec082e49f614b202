// The snippets of Sources/StallMonitor/StallMonitor.docc/GettingStarted.md, compiled. Markers and wrapping: DocSnippetsTests.
// Its Package.swift excerpt is a fragment (not Swift a module can compile).

// snippet: Sources/StallMonitor/StallMonitor.docc/GettingStarted.md
import Foundation
import StallMonitor
// snippet: pause
import Logging

/// The program on the main RunLoop (top-level code in a `main.swift`), as a function's body.
func gettingStartedMainRunLoopProgram() throws {
    // snippet: resume
    let monitor = try StallMonitor.start(.init(      // the main RunLoop
        threshold: .milliseconds(250),
        reportDirectory: URL(fileURLWithPath: "stall-reports")))
    RunLoop.main.run()
    monitor.stop()
    // snippet: end
}

/// The start-error example (statements), as a function's body.
func gettingStartedStartErrors(configuration: StallMonitor.Configuration, logger: Logger) {
    // snippet: Sources/StallMonitor/StallMonitor.docc/GettingStarted.md
    do {
        let monitor = try StallMonitor.start(configuration)
        // …
        monitor.stop()
    } catch where error.code == .loopNotRunning {
        // an `async main` program: its main thread never runs a RunLoop
    } catch {
        logger.error("stall monitor not started: \(error)")
    }
    // snippet: end
}
