// The snippets of Sources/StallMonitorServiceLifecycle/StallMonitorServiceLifecycle.docc/StallMonitorServiceLifecycle.md,
// compiled. Markers and wrapping: DocSnippetsTests.

// snippet: Sources/StallMonitorServiceLifecycle/StallMonitorServiceLifecycle.docc/StallMonitorServiceLifecycle.md
import Foundation
import Logging
import ServiceLifecycle
import StallMonitor
import StallMonitorServiceLifecycle
// snippet: pause

/// The `ServiceGroup` program, its `@main` type in a namespace (and without `@main`).
enum StallMonitorServiceLifecycleProgram {
    // snippet: resume
    struct App {
        static func main() async throws {
            let logger = Logger(label: "app")
            let configuration = StallMonitor.Configuration(reportDirectory: URL(fileURLWithPath: "stall-reports"), logger: logger)
            let stalls = try StallMonitorService(configuration)
            let app = MyHTTPService()   // your Service
            // The monitor first: it starts before the app and stops after it.
            let group = ServiceGroup(services: [stalls, app], gracefulShutdownSignals: [.sigterm], logger: logger)
            try await group.run()
        }
    }
    // snippet: end
}
