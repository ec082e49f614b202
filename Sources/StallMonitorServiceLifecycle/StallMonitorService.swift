#if ServiceLifecycle
import Foundation
import ServiceLifecycle
import StallMonitor

/// A `StallMonitor` as a swift-service-lifecycle `Service`, for an app that runs a
/// `ServiceGroup` (Hummingbird and Vapor apps do): `run()` starts the monitor, watches until the
/// group shuts down gracefully or the task is cancelled, then stops it, which writes every
/// report still queued. Nothing blocks a cooperative thread.
///
/// List it **first**: a `ServiceGroup` starts its services in order and shuts them down in
/// reverse order, so the monitor starts before the app and stops after it, watching the app's
/// own graceful shutdown too.
///
/// ```swift
/// let stalls = try StallMonitorService(StallMonitor.Configuration(reportDirectory: reports))
/// let group = ServiceGroup(services: [stalls, app], gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
///
/// `try StallMonitorService(configuration)` watches what the program runs (see ``init(_:)``); a SwiftNIO
/// app watches its event loops and the pool with
/// `StallMonitorService { try StallMonitor.start(configuration, eventLoopGroup: MultiThreadedEventLoopGroup.singleton) }`.
public struct StallMonitorService: Service {
    private let start: Start
    private let slot = MonitorSlot()

    /// How `run()` gets its monitor.
    private enum Start: Sendable {
        /// The first of the program's loops that can be watched; a monitor that cannot start
        /// leaves the group running.
        case program(StallMonitor.Configuration)
        /// What the closure starts; what it throws, `run()` throws.
        case given(@Sendable () throws -> StallMonitor)
    }

    /// A service that watches what this program runs, chosen when it runs: in a program with
    /// `async main` (every `ServiceGroup` app: its main thread is parked), the MainActor and the
    /// Swift concurrency pool, where the app's tasks and the async handlers of Hummingbird 2 and
    /// Vapor 4 run; in one whose main thread runs `RunLoop.main`, that run loop and the pool. It
    /// never cancels the group: when nothing can be watched here (an unsupported platform), `run()`
    /// logs why at error level through the configuration's logger, keeps ``startError``, and waits
    /// for the group's shutdown without watching. Throws `StallMonitorError` (code `invalidConfiguration`)
    /// at once for a setting out of range.
    public init(_ configuration: StallMonitor.Configuration) throws(StallMonitorError) {
        try configuration.validate()
        start = .program(configuration)
    }

    /// A service that watches `loops`, e.g. `[.mainActor, .concurrencyPool]`. Refuses at once (so
    /// the group is never started with it, let alone cancelled) what can never work here: an
    /// invalid configuration, `.main` in a program whose main thread never
    /// runs `RunLoop.main` (`async main`, `dispatchMain()`), `.current` (`run()`
    /// runs on the concurrency pool, whose threads run no run loop). What the platform cannot
    /// watch (`unsupportedLoop`) is found when it runs: `run()` throws it.
    public init(_ configuration: StallMonitor.Configuration, loops: [StallMonitor.Loop]) throws(StallMonitorError) {
        try configuration.validate()
        if loops.contains(.current) {
            throw .invalidConfiguration(
                "StallMonitorService runs on the Swift concurrency pool, whose threads run no run loop: `.current` would watch "
                    + "nothing. Start the monitor on the loop's own thread (`StallMonitor.start(_:loop: .current)`), or pass "
                    + "`init(start:)` a closure that starts it")
        }
        if loops.contains(.main), let why = StallMonitor.whyMainRunLoopNeverRuns() {
            throw .loopNotRunning(
                why + " `StallMonitorService(configuration)` watches the MainActor and the concurrency pool there.")
        }
        self.init { try StallMonitor.start(configuration, loops: loops) }
    }

    /// ``init(_:loops:)`` for one loop.
    public init(_ configuration: StallMonitor.Configuration, loop: StallMonitor.Loop) throws(StallMonitorError) {
        try self.init(configuration, loops: [loop])
    }

    /// A service that watches what `start` starts, e.g. every event loop of a SwiftNIO group and
    /// the concurrency pool (`StallMonitorNIO`'s `StallMonitor.start(_:eventLoopGroup:)`). `start`
    /// runs once, when the service runs, on a thread of its own; what it throws, `run()` throws
    /// (which cancels the group).
    public init(start: @escaping @Sendable () throws -> StallMonitor) {
        self.start = .given(start)
    }

    /// The monitor while ``run()`` runs (for its statistics, scene, pause, watched loops); nil
    /// before and after.
    public var monitor: StallMonitor? { slot.monitor.withLock { $0 } }

    /// Why ``init(_:)``'s service watched nothing in its last run (each choice's error); nil when
    /// it watched, or has not run.
    public var startError: StallMonitorError? { slot.startError.withLock { $0 } }

    /// Starts the monitor and watches until graceful shutdown or cancellation, then stops it
    /// (reports still queued are written first). On graceful shutdown it first waits (at most 2 s)
    /// for a stall still in progress to end, so a stall in the graceful shutdown of a service
    /// listed after it is reported in full. Throws what starting throws, except for
    /// ``init(_:)``'s service, which never throws.
    public func run() async throws {
        let started: Result<StallMonitor, any Error>
        switch start {
        case .given(let start):
            started = await Self.onOwnThread { Result { try start() } }
        case .program(let configuration):
            started = await Self.onOwnThread {
                Result { () throws(StallMonitorError) in try ProgramWatch.start(configuration) }
            }
        }
        let monitor: StallMonitor
        switch (started, start) {
        case (.success(let running), _):
            monitor = running
        case (.failure(let error), .given):
            throw error
        case (.failure(let error), .program(let configuration)):
            let reason = (error as? StallMonitorError) ?? .unsupportedLoop("\(error)")
            slot.startError.withLock { $0 = reason }
            configuration.logger.error("StallMonitorService watches nothing in this program: \(reason)")
            try? await gracefulShutdown()
            return
        }
        slot.startError.withLock { $0 = nil }
        slot.monitor.withLock { $0 = monitor }
        do {
            try await gracefulShutdown()
            await Self.settle(monitor)
        } catch {
            // Cancelled: stop all the same, at once.
        }
        await monitor.stop()
        slot.monitor.withLock { $0 = nil }
    }

    /// Waits, suspended, for stalls in progress when the graceful shutdown reached the monitor
    /// (a service shut down before it that stalled at the end) to end, at most 2 s, so that they
    /// are reported in full.
    private static func settle(_ monitor: StallMonitor) async {
        let reached = StallMonitor.monotonicNanoseconds()
        while monitor.openSpanStarts.contains(where: { $0 < reached }),
            StallMonitor.monotonicNanoseconds() - reached < 2_000_000_000, !Task.isCancelled
        {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Runs blocking `body` (a start, which may wait for the pool or the MainActor to run a probe)
    /// on a thread of its own while the caller is suspended.
    private static func onOwnThread<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.name = "StallMonitorService.start"
            thread.start()
        }
    }
}

/// The running monitor and the last start error, shared by copies of the service (locks
/// ThreadSanitizer can see).
private final class MonitorSlot: Sendable {
    let monitor = Locked<StallMonitor?>(nil)
    let startError = Locked<StallMonitorError?>(nil)
}
#endif
