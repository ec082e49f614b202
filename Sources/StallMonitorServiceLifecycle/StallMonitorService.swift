import ServiceLifecycle
import StallMonitor

/// A ``StallMonitor`` as a swift-service-lifecycle `Service`, for an app that runs a
/// `ServiceGroup` (Hummingbird and Vapor apps do): `run()` starts the monitor, watches until the
/// group shuts down gracefully or the task is cancelled, then stops it, which writes every
/// report still queued. Nothing blocks a cooperative thread.
///
/// ```swift
/// let stalls = StallMonitorService {
///     try StallMonitor.start(configuration, eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
/// }
/// let group = ServiceGroup(services: [app, stalls], gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
public struct StallMonitorService: Service {
    private let start: @Sendable () throws -> StallMonitor
    private let slot = MonitorSlot()

    /// A service that watches a run loop, as ``StallMonitor/start(_:loop:)`` does (`.main` in a
    /// program whose main thread runs `RunLoop.main`; in one with `async main` starting fails,
    /// and `run()` throws, saying so).
    public init(_ configuration: StallMonitor.Configuration, loop: StallMonitor.Loop = .main) {
        self.init { try StallMonitor.start(configuration, loop: loop) }
    }

    /// A service that watches what `start` starts, e.g. every event loop of a SwiftNIO group
    /// (`StallMonitorNIO`'s `StallMonitor.start(_:eventLoopGroup:)`). `start` runs once, when the
    /// service runs; what it throws, `run()` throws.
    public init(start: @escaping @Sendable () throws -> StallMonitor) {
        self.start = start
    }

    /// The monitor while ``run()`` runs (for its statistics, scene, pause); nil before and after.
    public var monitor: StallMonitor? { slot.monitor.withLock { $0 } }

    /// Starts the monitor and watches until graceful shutdown or cancellation, then stops it
    /// (reports still queued are written first). Throws what starting throws.
    public func run() async throws {
        let monitor = try start()
        slot.monitor.withLock { $0 = monitor }
        do {
            try await gracefulShutdown()
        } catch {
            // Cancelled: stop all the same.
        }
        await monitor.stop()
        slot.monitor.withLock { $0 = nil }
    }
}

/// The running monitor, shared by copies of the service (a lock ThreadSanitizer can see).
private final class MonitorSlot: Sendable {
    let monitor = Locked<StallMonitor?>(nil)
}
