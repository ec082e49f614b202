// The snippets of Sources/StallMonitor/StallMonitor.docc/WatchingTheConcurrencyPool.md, compiled. Markers and wrapping: DocSnippetsTests.
import StallMonitor

/// The pool and MainActor examples (statements), as a function's body.
func watchingTheConcurrencyPool(configuration: StallMonitor.Configuration) throws {
    // snippet: Sources/StallMonitor/StallMonitor.docc/WatchingTheConcurrencyPool.md
    // An async program without NIO: the MainActor and the pool.
    let monitor = try StallMonitor.start(configuration, loops: [.mainActor, .concurrencyPool])

    // Only the pool.
    let poolMonitor = try StallMonitor.start(configuration, loop: .concurrencyPool)
    // snippet: end
    _ = (monitor, poolMonitor)
}
