// The snippets of Sources/StallMonitor/StallMonitor.docc/WatchingARunLoop.md, compiled. Markers and wrapping: DocSnippetsTests.
import Foundation
import StallMonitor

/// The main RunLoop example (statements), as a function's body.
func watchingTheMainRunLoop(configuration: StallMonitor.Configuration) throws {
    // snippet: Sources/StallMonitor/StallMonitor.docc/WatchingARunLoop.md
    let monitor = try StallMonitor.start(configuration)            // loop: .main
    RunLoop.main.run()
    // snippet: end
    _ = monitor
}

/// The example of a thread running its own RunLoop (statements), as a function's body.
func watchingAThreadsRunLoop(configuration: StallMonitor.Configuration) {
    // snippet: Sources/StallMonitor/StallMonitor.docc/WatchingARunLoop.md
    Thread {
        let monitor = try! StallMonitor.start(configuration, loop: .current)
        RunLoop.current.run()
        monitor.stop()
    }.start()
    // snippet: end
}

/// The resident loop thread example (statements), as a function's body.
func watchingAResidentLoopThread(configuration: StallMonitor.Configuration) throws {
    // snippet: Sources/StallMonitor/StallMonitor.docc/WatchingARunLoop.md
    let worker = try ResidentLoopThread(name: "decoder", monitor: configuration)
    worker.perform { decode() }
    worker.stop()
    // snippet: end
}
