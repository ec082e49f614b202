// The snippets of Sources/StallMonitor/StallMonitor.docc/AvoidingStalls.md, compiled. Markers and wrapping: DocSnippetsTests.

// snippet: Sources/StallMonitor/StallMonitor.docc/AvoidingStalls.md
import StallMonitor
// snippet: pause

/// The idle-work queue example (top-level code), as a function's body.
func avoidingStallsIdleWorkQueue() throws {
    // snippet: resume
    let monitor = try StallMonitor.start(.init(reportDirectory: reports))     // watches the main loop
    let thumbnails = try IdleWorkQueue(loop: .main, .init(
        budget: .milliseconds(4),               // no item starts after 4 ms of a pass
        capacity: 300,                          // more waiting items drop the oldest…
        onDrop: { dropped in                    // …and say so (rows that scrolled away)
            log.debug("thumbnail skipped", metadata: ["row": "\(dropped.ticket.label ?? "?")", "reason": "\(dropped.reason)"])
        }))

    func rowsAppeared(_ rows: [Row]) {          // from any thread
        for row in rows {
            let ticket = thumbnails.submit(label: "\(row.id)") { renderThumbnail(row) }
            row.onDisappear = { ticket.cancel() }   // true if it never ran
        }
    }

    // At shutdown: nothing is lost silently.
    for unrun in thumbnails.close() { unrun.work() }   // or let them go; each says why it did not run
    // snippet: end
    _ = monitor
}

/// The resident loop thread example (statements), as a function's body.
func avoidingStallsResidentLoopThread() throws {
    // snippet: Sources/StallMonitor/StallMonitor.docc/AvoidingStalls.md
    let worker = try ResidentLoopThread(name: "thumbnails",
                                        monitor: .init(threshold: .milliseconds(100), reportDirectory: reports))
    worker.perform { cache.warm() }                        // asynchronous; runs in submission order
    let count = try worker.performAndWait { cache.count }  // synchronous (inline when called on the thread)
    let idle = try worker.makeIdleWorkQueue()              // idle-time work on that thread
    worker.stop()   // refuses new work, runs what was submitted, stops the loop and the monitor, joins
    // snippet: end
    _ = (count, idle)
}
