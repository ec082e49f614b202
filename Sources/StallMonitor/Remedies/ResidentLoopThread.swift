import CStallMonitor
import CoreFoundation
import Foundation
import StallReportModel

#if canImport(Glibc)
import Glibc
#endif

/// A named thread that keeps its own run loop alive until stopped: a home for background work
/// that needs a loop (timers, sources, ``IdleWorkQueue``) without making one of its own.
///
/// ```swift
/// let worker = try ResidentLoopThread(name: "thumbnails", monitor: .init(reportDirectory: reports))
/// worker.perform { cache.warm() }                       // asynchronous, in submission order
/// let count = try worker.performAndWait { cache.count } // synchronous, returns the value
/// worker.stop()                                         // runs what was submitted, then joins
/// ```
///
/// - The thread runs its run loop in the default mode (its work source is in the common modes);
///   `perform` closures run on it one at a time, in the order their `perform` calls were made.
/// - With a monitor configuration, a ``StallMonitor`` watches the loop from its first pass and
///   is stopped (its reports written) before the thread ends.
/// - ``stop()`` refuses further work, lets the work already submitted run, stops the loop, stops
///   the monitor, removes the thread's source and joins the thread: afterwards no thread,
///   descriptor or observer of it remains. Releasing the object without `stop()` does the same
///   without waiting (the thread is detached and ends by itself).
public final class ResidentLoopThread: @unchecked Sendable {
    /// Thrown by ``performAndWait(_:)`` after ``stop()``: the work was not run.
    public struct NotRunning: Error, CustomStringConvertible {
        /// The thread's name.
        public let name: String
        /// A one-line explanation.
        public var description: String { "resident loop thread \(name) is stopped" }
    }

    /// The thread's name (also its kernel name, cut to 15 bytes).
    public let name: String
    /// The monitor watching the thread's loop, when one was configured.
    public let monitor: StallMonitor?
    private let core: ResidentLoopCore
    private let thread: pthread_t
    private let joined = Locked(false)

    /// Starts the thread and returns once its run loop is ready (and, with `monitor`, once the
    /// monitor watches it). `stackSize` 0 keeps the system's default. Throws `threadStart` when
    /// the thread cannot be created, or the monitor's error when it cannot start.
    public init(
        name: String, monitor configuration: StallMonitor.Configuration? = nil,
        stackSize: Int = 0
    ) throws(StallMonitorError) {
        self.name = name
        let core = ResidentLoopCore(name: name, monitor: configuration)
        self.core = core
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        if stackSize > 0 {
            let result = pthread_attr_setstacksize(&attributes, stackSize)
            guard result == 0 else { throw .threadStart("stack size \(stackSize): \(CString.errorMessage(result))") }
        }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(core).toOpaque()
        let result = pthread_create(
            &thread, &attributes,
            { context in
                Unmanaged<ResidentLoopCore>.fromOpaque(context!).takeRetainedValue().threadMain()
                return nil
            }, context)
        guard result == 0 else {
            Unmanaged<ResidentLoopCore>.fromOpaque(context).release()
            throw .threadStart("pthread_create: \(CString.errorMessage(result))")
        }
        self.thread = thread
        core.ready.wait()
        switch core.monitor {
        case .success(let monitor):
            self.monitor = monitor
        case .failure(let error):
            pthread_join(thread, nil)
            joined.withLock { $0 = true }
            throw error
        }
    }

    deinit {
        core.requestStop()
        joined.withLock { joined in
            guard !joined else { return }
            pthread_detach(thread)
            joined = true
        }
    }

    /// Whether the calling thread is this one.
    public var isCurrent: Bool { pthread_equal(pthread_self(), thread) != 0 }

    /// Queues `work` to run on the thread; returns `false` (and drops it) after ``stop()``.
    @discardableResult
    public func perform(_ work: @escaping @Sendable () -> Void) -> Bool {
        core.enqueue(work)
    }

    /// Runs `work` on the thread and returns its result (at once, inline, when called on the
    /// thread itself). Throws what `work` throws, or ``NotRunning`` after ``stop()``.
    public func performAndWait<T: Sendable>(_ work: @escaping @Sendable () throws -> T) throws -> T {
        if isCurrent { return try work() }
        let outcome = Locked<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        guard
            core.enqueue({
                let result = Result { try work() }
                outcome.withLock { $0 = result }
                done.signal()
            })
        else { throw NotRunning(name: name) }
        done.wait()
        guard let result = outcome.withLock({ $0 }) else { throw NotRunning(name: name) }
        return try result.get()
    }

    /// An ``IdleWorkQueue`` on this thread's run loop.
    public func makeIdleWorkQueue(
        _ configuration: IdleWorkQueue.Configuration = .init()
    ) throws(StallMonitorError) -> IdleWorkQueue {
        try IdleWorkQueue(runLoop: core.runLoop, configuration)
    }

    /// Refuses further work, lets the work already submitted run, stops the loop and the monitor,
    /// and waits for the thread to end. Called on the thread itself, it returns at once and the
    /// thread ends when the current work returns (a later `stop()` elsewhere waits for it).
    /// Calling it again does nothing more.
    public func stop() {
        core.requestStop()
        guard !isCurrent else { return }
        joined.withLock { joined in
            guard !joined else { return }
            pthread_join(thread, nil)
            joined = true
        }
    }
}

/// What a ``ResidentLoopThread`` shares with its thread: the queued work, the run loop and its
/// work source.
final class ResidentLoopCore: @unchecked Sendable {
    private struct Queue {
        var work: [@Sendable () -> Void] = []
        var stopRequested = false
    }

    /// The thread's run loop and work source, set once by the thread before `ready`.
    struct Handles: @unchecked Sendable {
        let runLoop: CFRunLoop
        let source: CFRunLoopSource
    }

    let name: String
    private let monitorConfiguration: StallMonitor.Configuration?
    private let queue = Locked(Queue())
    /// Signalled by the thread once `handles` and `started` are set.
    let ready = DispatchSemaphore(value: 0)
    private let handles = Locked<Handles?>(nil)
    /// The monitor watching the loop, or why it could not start.
    private let started = Locked<Result<StallMonitor?, StallMonitorError>>(.success(nil))

    /// The thread's run loop (after `ready`).
    var runLoop: CFRunLoop { handles.withLock { $0 }!.runLoop }
    /// The monitor, or its start error (after `ready`).
    var monitor: Result<StallMonitor?, StallMonitorError> { started.withLock { $0 } }

    init(name: String, monitor: StallMonitor.Configuration?) {
        self.name = name
        monitorConfiguration = monitor
    }

    /// The thread's body: set up, run the loop until stopped, tear down.
    func threadMain() {
        // Foundation's `Thread.name` reads this kernel name back on Linux.
        _ = CStallMonitor_set_thread_name(Self.kernelName(name))
        let runLoop = CFRunLoopGetCurrent()!
        var context = CFRunLoopSourceContext(
            version: 0, info: Unmanaged.passUnretained(self).toOpaque(),
            retain: nil, release: nil, copyDescription: nil, equal: nil, hash: nil,
            schedule: nil, cancel: nil,
            perform: { info in
                Unmanaged<ResidentLoopCore>.fromOpaque(info!)._withUnsafeGuaranteedRef { $0.runQueuedWork() }
            })
        let source = CFRunLoopSourceCreate(nil, 0, &context)!
        CFRunLoopAddSource(runLoop, source, kCFRunLoopCommonModes)
        let loop = Handles(runLoop: runLoop, source: source)
        handles.withLock { $0 = loop }
        var monitor: StallMonitor?
        if let monitorConfiguration {
            do {
                monitor = try StallMonitor.start(monitorConfiguration, loop: .current)
            } catch {
                started.withLock { $0 = .failure(error) }
                tearDown(loop)
                ready.signal()
                return
            }
        }
        started.withLock { $0 = .success(monitor) }
        ready.signal()
        while !queue.withLock({ $0.stopRequested && $0.work.isEmpty }) {
            _ = CFRunLoopRunInMode(kCFRunLoopDefaultMode, 1.0e10, false)
        }
        monitor?.stop()
        tearDown(loop)
    }

    private func tearDown(_ loop: Handles) {
        CFRunLoopRemoveSource(loop.runLoop, loop.source, kCFRunLoopCommonModes)
        CFRunLoopSourceInvalidate(loop.source)
    }

    /// Queues `work` and wakes the loop; `false` once a stop was requested.
    func enqueue(_ work: @escaping @Sendable () -> Void) -> Bool {
        let accepted = queue.withLock { queue in
            guard !queue.stopRequested else { return false }
            queue.work.append(work)
            return true
        }
        if accepted { signal() }
        return accepted
    }

    /// Refuses further work and asks the loop to stop once the queued work has run.
    func requestStop() {
        let first = queue.withLock { queue in
            defer { queue.stopRequested = true }
            return !queue.stopRequested
        }
        if first { signal() }
    }

    private func signal() {
        guard let loop = handles.withLock({ $0 }) else { return }
        CFRunLoopSourceSignal(loop.source)
        CFRunLoopWakeUp(loop.runLoop)
    }

    /// The source's callout, on the thread: runs what is queued, then stops the loop if asked.
    private func runQueuedWork() {
        let batch = queue.withLock { queue in
            defer { queue.work.removeAll() }
            return queue.work
        }
        for work in batch { work() }
        let (more, stop) = queue.withLock { ($0.work.isEmpty == false, $0.stopRequested && $0.work.isEmpty) }
        guard let loop = handles.withLock({ $0 }) else { return }
        if stop {
            CFRunLoopStop(loop.runLoop)
            // A nested run of the loop may have been the one stopped: come back to the outer one.
            CFRunLoopSourceSignal(loop.source)
        } else if more {
            CFRunLoopSourceSignal(loop.source)
        }
    }

    /// `name` cut to the 15 bytes a Linux thread name holds, at a character boundary.
    static func kernelName(_ name: String) -> String {
        var result = ""
        for character in name {
            guard result.utf8.count + character.utf8.count <= 15 else { break }
            result.append(character)
        }
        return result
    }
}
