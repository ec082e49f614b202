// The snippets of Sources/StallMonitor/StallMonitor.docc/InProduction.md, compiled. Markers and wrapping: DocSnippetsTests.
import StallMonitor

/// The known-long-work and scene example (statements), as a function's body.
func inProductionControls(monitor: StallMonitor) throws {
    // snippet: Sources/StallMonitor/StallMonitor.docc/InProduction.md
    try monitor.expectLongWork { try loadTheDocumentTheUserAskedFor() }   // on the monitored thread
    monitor.whilePaused { runMigration() }                           // from any thread, nests
    monitor.pause(); runMigration(); monitor.resume()                // the same, unscoped
    monitor.scene = "Checkout"                                         // copied into reports
    // snippet: end
}
