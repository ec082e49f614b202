// The snippets of Sources/StallMonitorNIO/StallMonitorNIO.docc/StallMonitorNIO.md, compiled. Markers and wrapping: DocSnippetsTests.

// snippet: Sources/StallMonitorNIO/StallMonitorNIO.docc/StallMonitorNIO.md
import Foundation
import NIOPosix
import StallMonitor
import StallMonitorNIO
// snippet: pause

/// The server program (top-level code in a `main.swift`), as a function's body.
func stallMonitorNIOServerProgram() throws {
    // snippet: resume
    let monitor = try StallMonitor.start(
        .init(threshold: .milliseconds(250), reportDirectory: URL(fileURLWithPath: "stall-reports")),
        eventLoopGroup: MultiThreadedEventLoopGroup.singleton)   // every loop of the group, and the pool
    // … run the server (Hummingbird's Application, Vapor's app, a ServerBootstrap) …
    monitor.stop()                                               // before shutting down a group you own
    // snippet: end
}
