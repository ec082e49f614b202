// The snippets of README.md, compiled. Markers and wrapping: DocSnippetsTests.

// snippet: README.md
import Foundation
import StallMonitor
// snippet: pause

/// README's program on the main RunLoop (top-level code in a `main.swift`), as a function's body.
func readmeMainRunLoopProgram() throws {
    // snippet: resume
    let monitor = try StallMonitor.start(.init(
        threshold: .milliseconds(250),
        reportDirectory: URL(fileURLWithPath: "stall-reports")))   // watches the main RunLoop
    RunLoop.main.run()
    monitor.stop()
    // snippet: end
}

// snippet: README.md
import Foundation
import NIOPosix
import StallMonitor
import StallMonitorNIO
// snippet: pause

/// README's SwiftNIO server, its `@main` type in a namespace (and without `@main`).
enum ReadmeNIOServer {
    // snippet: resume
    struct Server {
        static func main() async throws {
            let monitor = try StallMonitor.start(
                .init(reportDirectory: URL(fileURLWithPath: "stall-reports")),
                eventLoopGroup: MultiThreadedEventLoopGroup.singleton)   // its event loops and the pool
            // … run the server …
            await monitor.stop()   // in async code, stop() and flush() do their blocking part off the pool
        }
    }
    // snippet: end
}
