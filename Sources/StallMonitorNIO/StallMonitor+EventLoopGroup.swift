#if NIO
import NIOCore
import StallMonitor

extension StallMonitor {
    /// The loop kind reports name for a SwiftNIO event loop.
    public static let nioEventLoopKind = "nioEventLoop"

    /// Starts watching every event loop of `group` (one report per stall, naming the loop's thread,
    /// `NIO-ELT-<group>-#<loop>` or `NIO-SGLTN-…`), e.g. `MultiThreadedEventLoopGroup.singleton`,
    /// which Hummingbird and Vapor use by default. Stalls in a `ChannelHandler`, in an `execute`
    /// closure and in a scheduled task are all seen: a span lasts from when the loop left its
    /// selector until it gets back to its task queue.
    ///
    /// ```swift
    /// let monitor = try StallMonitor.start(.init(reportDirectory: reports),
    ///                                      eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
    /// ```
    ///
    /// NIO calls nobody back when a loop wakes, so the watchdog looks at each loop's thread every
    /// `pollInterval` without disturbing it (`/proc/self/task/<tid>/syscall`: idle while blocked in
    /// `epoll_wait`), and while a loop is busy it queues a no-op task on it, whose run marks the loop
    /// getting back to its tasks: a loop saturated with short work is never taken for a stuck one.
    /// The interval bounds how early a stall that blocks at once (a `sleep`, a lock) can be dated:
    /// half an interval at most; a CPU-bound stall's start is exact. While every loop (and the
    /// pool) idles the watchdog sleeps: a loop's first return from `epoll_wait` wakes it (the
    /// library defines a weak pass-through `epoll_wait` its loops wait through). Stop the monitor
    /// before you shut `group` down.
    ///
    /// - Parameters:
    ///   - configuration: as for a run loop; `threshold` applies to each loop.
    ///   - group: the group whose loops to watch (SwiftNIO's POSIX loops, `NIOPosix`).
    ///   - pollInterval: how often the watchdog looks at busy loops, at least 1 ms. Default 20 ms.
    ///   - concurrencyPool: whether to watch the Swift concurrency pool too (`.concurrencyPool`),
    ///     where Hummingbird 2 runs every route handler and Vapor 4 its `async` routes. Default
    ///     true: a server's code runs on both. Where the pool cannot be watched (not x86_64 Linux)
    ///     the start throws `StallMonitorError` (code `unsupportedLoop`): pass false there.
    public static func start(
        _ configuration: Configuration, eventLoopGroup group: any EventLoopGroup,
        pollInterval: Duration = .milliseconds(20), concurrencyPool: Bool = true
    ) throws(StallMonitorError) -> StallMonitor {
        let loops = EventLoopWatch.loops(of: group)
        return try start(
            configuration, loops: concurrencyPool ? [.concurrencyPool] : [],
            polling: loops.map { EventLoopWatch(loop: $0).polledLoop }, pollInterval: pollInterval)
    }
}
#endif
