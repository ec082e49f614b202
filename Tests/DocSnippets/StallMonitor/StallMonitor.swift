// The snippets of Sources/StallMonitor/StallMonitor.docc/StallMonitor.md, compiled. Markers and wrapping: DocSnippetsTests.

// snippet: Sources/StallMonitor/StallMonitor.docc/StallMonitor.md
import Foundation
import StallMonitor
// snippet: pause

/// The catalog's first program (top-level code in a `main.swift`), as a function's body.
func stallMonitorOverviewProgram() throws {
    // snippet: resume
    let monitor = try StallMonitor.start(.init(reportDirectory: URL(fileURLWithPath: "stall-reports")))
    RunLoop.main.run()
    // snippet: end
    _ = monitor
}
