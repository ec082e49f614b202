/// One kind of loop, seen as loop-agnostic events. A probe tells a ``SpanTracker``, on the
/// loop's own thread, when the loop entered or left a run, began a pass, is about to wait and
/// woke (``SpanTracker/loopEntered(at:)`` and the others), and which mode it runs in
/// (``SpanTracker/noteMode(_:)``); it runs the monitor's arming step once on that thread. The
/// watchdog, sampler, writer and report builder see only the tracker and the probe's ``kind``.
///
/// ``RunLoopProbe`` (CFRunLoop observers, push) is the first implementation.
protocol LoopProbe: AnyObject, Sendable {
    /// The loop kind reports and summaries name (`runLoop`).
    var kind: String { get }

    /// Starts feeding `tracker` and runs `arm` once on the loop's thread: at once when called
    /// there, otherwise the next time the loop runs.
    func attach(to tracker: SpanTracker, arm: @escaping @Sendable () -> Void)

    /// Stops feeding the tracker. An event already being delivered may still arrive.
    func detach()
}
