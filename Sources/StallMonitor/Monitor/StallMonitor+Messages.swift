import CStallMonitor

extension StallMonitor {
    /// What the warning says of a starved pool.
    static func starvationMessage(waited: UInt64, workers: [ConcurrencyPoolProbe.HeldWorker]) -> String {
        let held = workers.map { worker in
            let job =
                worker.heldFor.map { "a task held it \($0 / 1_000_000) ms" }
                ?? "no task (other Dispatch work or between jobs)"
            return "thread \(worker.tid) \(worker.name): \(job)"
        }
        return
            "no new job started for \(waited / 1_000_000) ms: every worker is held (\(held.joined(separator: "; "))); "
            + "one report gives every worker's stack"
    }

    /// What the warning says of a loop that has not run since the monitor started.
    static func silenceMessage(_ thread: MonitoredThread, after: Duration) -> String {
        let seconds = Double(after.nanoseconds) / 1e9
        let waited = seconds.rounded() == seconds ? "\(Int(seconds)) s" : "\(seconds) s"
        switch thread.loopKind {
        case .runLoop:
            return "the watched run loop has not run in the \(waited) since the monitor started: nothing is watched. "
                + "A program with `async main` or `dispatchMain()` never runs RunLoop.main (see the README's "
                + "\"Which loop does my program run?\"); `loop: .current` watches the calling thread's run loop."
        default:
            return
                "the watched \(thread.loopKind) has not run a task in the \(waited) since the monitor started: it is not watched."
        }
    }

    /// Emits the loops' times and brings the dropped-report counters up to date (writer queue:
    /// each heartbeat, and at stop).
    static func emitMetrics(
        _ metrics: StallMetrics, threads: [MonitoredThread], counters: MonitorCounters,
        errors: ErrorReporter
    ) {
        metrics.emitLoopTime(threads, now: CStallMonitor_monotonic_ns())
        metrics.syncDropped(counters, errors: errors.counts)
    }
}
