/// The pool as one loop its slots share: its scheduling delays go to the metrics, its starvation
/// is said and reported with every worker's stack.
extension ConcurrencyPoolProbe: SharedLoop {
    func observe(_ parts: SharedLoopObservers) {
        let (metrics, counters, errors, controls) = (parts.metrics, parts.counters, parts.errors, parts.controls)
        observers.withLock {
            $0 = .init(
                delay: { metrics.recordPoolDelay(nanoseconds: $0) },
                starved: { waited, workers in
                    counters.poolStarvations.add(1, ordering: .relaxed)
                    errors.report(.poolStarved(StallMonitor.starvationMessage(waited: waited, workers: workers)))
                },
                report: PoolStarvationReport(
                    settings: parts.settings,
                    emit: { [writer = parts.writer] recording in
                        // Nothing the writer holds leads back here: its session record reads the
                        // span trackers only, never the threads or their probes.
                        // A paused monitor reports nothing (as for a loop's stalls).
                        guard !controls.isPaused else { return }
                        counters.stallsDetected.add(1, ordering: .relaxed)
                        writer.submit(.ended(recording))
                    }))
        }
    }
}
