/// A loop that calls nobody back when it wakes or waits (a SwiftNIO event loop, say), described
/// for a ``ThreadPollingProbe``: what its thread is blocked in while idle, and how to run a
/// closure on it. The integration targets (`StallMonitorNIO`) make these.
package struct PolledLoop: Sendable {
    /// The loop kind reports name (`nioEventLoop`).
    package var kind: String
    /// Syscall numbers the loop's thread is blocked in while the loop is idle (`epoll_wait`, …).
    package var idleSyscalls: Set<Int>
    /// Queues a closure to run on the loop's thread, through the loop's own task queue. False when
    /// the loop no longer accepts work (it is shutting down).
    package var execute: @Sendable (@escaping @Sendable () -> Void) -> Bool
    /// Called once when the monitor stops watching the loop.
    package var detach: @Sendable () -> Void

    package init(
        kind: String, idleSyscalls: Set<Int>,
        execute: @escaping @Sendable (@escaping @Sendable () -> Void) -> Bool,
        detach: @escaping @Sendable () -> Void = {}
    ) {
        self.kind = kind
        self.idleSyscalls = idleSyscalls
        self.execute = execute
        self.detach = detach
    }
}
