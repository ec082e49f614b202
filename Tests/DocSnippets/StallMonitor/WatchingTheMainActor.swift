// The snippets of Sources/StallMonitor/StallMonitor.docc/WatchingTheMainActor.md, compiled. Markers and wrapping: DocSnippetsTests.

// snippet: Sources/StallMonitor/StallMonitor.docc/WatchingTheMainActor.md
import Foundation
import StallMonitor
// snippet: pause

/// The `async main` program, its `@main` type in a namespace (and without `@main`).
enum WatchingTheMainActorProgram {
    // snippet: resume
    struct App {
        static func main() async throws {
            let monitor = try StallMonitor.start(.init(reportDirectory: URL(fileURLWithPath: "stall-reports")),
                                                 loops: [.mainActor, .concurrencyPool])
            // … the program; MainActor work runs on Dispatch worker threads …
            await monitor.stop()
        }
    }
    // snippet: end
}
