/// A loop several probes watch one slot each of (the concurrency pool: one slot per busy
/// worker). What concerns the whole loop is asked of it, through ``LoopProbe/sharedLoop``, never
/// of a probe's type.
protocol SharedLoop: AnyObject, Sendable {
    /// Runs `body`, declared long work, on thread `tid`: a worker of the loop no slot watches yet,
    /// whose next span is marked as expected when a slot meets it.
    func expectingLongWork<Result, Failure: Error>(
        on tid: Int32, _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result

    /// Starts telling the monitor's parts what the loop as a whole does (its scheduling delays,
    /// its starvation, said and reported). Called once, before the watchdog starts.
    func observe(_ parts: SharedLoopObservers)
}

/// The monitor's parts a ``SharedLoop`` tells what the whole loop does.
struct SharedLoopObservers: Sendable {
    var settings: ThreadWatch.Settings
    var metrics: StallMetrics
    var counters: MonitorCounters
    var errors: ErrorReporter
    var controls: MonitorControls
    var writer: ReportWriter
}

/// `elements` with one element per shared loop: every element whose loop is its own, and the
/// first of each shared loop's (its slots are one loop).
func oneEachPerSharedLoop<Element>(_ elements: [Element], _ sharedLoop: (Element) -> (any SharedLoop)?) -> [Element] {
    var seen: Set<ObjectIdentifier> = []
    return elements.filter { element in
        guard let loop = sharedLoop(element) else { return true }
        return seen.insert(ObjectIdentifier(loop)).inserted
    }
}
