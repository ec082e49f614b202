// The snippets of Sources/StallMonitor/StallMonitor.docc/Configuration.md, compiled. Markers and wrapping: DocSnippetsTests.
import Foundation
import Logging
import StallMonitor

/// The configuration example (statements), as a function's body.
func configurationSettings() {
    // snippet: Sources/StallMonitor/StallMonitor.docc/Configuration.md
    var configuration = StallMonitor.Configuration(reportDirectory: URL(fileURLWithPath: "stall-reports"))
    configuration.threshold = .milliseconds(250)
    configuration.appVersion = "1.4.2"
    // snippet: end
    _ = configuration
}

/// The start-error example (statements), as a function's body; it assigns a `monitor` declared before.
func configurationStartErrors(configuration: StallMonitor.Configuration, logger: Logger) {
    var monitor: StallMonitor?
    // snippet: Sources/StallMonitor/StallMonitor.docc/Configuration.md
    do { monitor = try StallMonitor.start(configuration) }
    catch where error.code == .loopNotRunning { /* async main: watch another loop */ }
    catch { logger.error("stall monitor not started: \(error)") }
    // snippet: end
    monitor?.stop()
}
