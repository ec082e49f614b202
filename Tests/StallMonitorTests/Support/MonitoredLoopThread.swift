import CoreFoundation
import Foundation
import Glibc
import StallMonitor
import Synchronization

/// Why a test helper gave up waiting.
struct TestTimeout: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting for \(what)" }
}

/// A thread that runs its own `RunLoop` (kept alive by a far-future timer) so a test can watch it
/// with `loop: .current`, run closures on it and make it stall. Every wait has a deadline; a loop
/// that does not answer in time makes the wait throw instead of hanging the test run.
final class MonitoredLoopThread: @unchecked Sendable {
    /// Kernel thread id of the loop thread.
    let tid: Int32
    /// The thread's name (as the kernel sees it, at most 15 characters).
    let name: String

    // Written once by the loop thread before `started` is signalled, read-only afterwards.
    private nonisolated(unsafe) var runLoop: CFRunLoop?
    private let stopping = StopFlag()
    private let exited = DispatchSemaphore(value: 0)

    /// Starts the thread and waits (at most 5 s) until its run loop is about to run.
    init(name: String) throws {
        self.name = name
        let started = DispatchSemaphore(value: 0)
        let identity = Mutex<(tid: Int32, loop: UncheckedLoop?)>((0, nil))
        let stopping = self.stopping
        let exited = self.exited
        let thread = Thread {
            setKernelThreadName(name)
            let loop = CFRunLoopGetCurrent()
            identity.withLock { $0 = (Kernel.currentThreadID(), UncheckedLoop(loop: loop!)) }
            // A source that never fires keeps `run(mode:before:)` from returning at once (a CF
            // timer: Foundation's block Timer is never freed, which LeakSanitizer reports).
            let keepAlive = CFRunLoopTimerCreateWithHandler(nil, .greatestFiniteMagnitude, 0, 0, 0) { _ in }
            CFRunLoopAddTimer(loop, keepAlive, kCFRunLoopDefaultMode)
            started.signal()
            while !stopping.value.load(ordering: .sequentiallyConsistent) {
                _ = RunLoop.current.run(mode: .default, before: .distantFuture)
            }
            CFRunLoopTimerInvalidate(keepAlive)
            exited.signal()
        }
        thread.stackSize = 4 << 20
        thread.start()
        guard started.wait(timeout: .now() + 5) == .success else {
            throw TestTimeout(what: "loop thread \(name) to start")
        }
        let (tid, loop) = identity.withLock { $0 }
        self.tid = tid
        self.runLoop = loop?.loop
    }

    /// Schedules `body` on the loop (default mode) and wakes it; returns a handle to wait for it.
    @discardableResult
    func perform<T: Sendable>(_ body: @escaping @Sendable () -> T) -> PendingResult<T> {
        let pending = PendingResult<T>()
        CFRunLoopPerformBlock(runLoop, kCFRunLoopDefaultMode) {
            pending.fulfil(body())
        }
        CFRunLoopWakeUp(runLoop)  // CF does not wake a sleeping loop for a new block
        return pending
    }

    /// Runs `body` on the loop and waits at most `timeout` for its result.
    func run<T: Sendable>(timeout: Duration = .seconds(10), _ body: @escaping @Sendable () -> T) throws -> T {
        try perform(body).wait(timeout: timeout, what: "a closure on \(name)")
    }

    /// Starts a monitor of this thread's loop, on the thread itself (`loop: .current`, from a
    /// callout), then waits until the loop sleeps again, so that the next closure begins a span
    /// of its own.
    func startMonitor(_ configuration: StallMonitor.Configuration) throws -> StallMonitor {
        let monitor = try run { () -> Result<StallMonitor, StallMonitorError> in
            Result { () throws(StallMonitorError) in try StallMonitor.start(configuration, loop: .current) }
        }.get()
        try waitUntilSleeping()
        return monitor
    }

    /// Waits (at most `timeout`) until the loop thread sleeps (scheduler state `S`, which for an
    /// idle loop thread means waiting for events) and stays asleep for 20 ms.
    func waitUntilSleeping(timeout: Duration = .seconds(5)) throws {
        var asleepSince: ContinuousClock.Instant?
        let settled = waitUntil(timeout: timeout) {
            guard schedulerState() == "S" else {
                asleepSince = nil
                return false
            }
            let now = ContinuousClock.now
            if asleepSince == nil { asleepSince = now }
            return now - asleepSince! >= .milliseconds(20)
        }
        if !settled { throw TestTimeout(what: "loop thread \(name) to go idle") }
    }

    /// The thread's scheduler state letter from `/proc/self/task/<tid>/stat`.
    func schedulerState() -> String {
        guard let text = try? String(contentsOfFile: "/proc/self/task/\(tid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return "?" }
        return text[text.index(after: close)...].drop { $0 == " " }.first.map(String.init) ?? "?"
    }

    /// Stops the loop and waits (at most `timeout`) for the thread to exit. Returns false when it
    /// did not (a closure is still stuck on it).
    @discardableResult
    func stop(timeout: Duration = .seconds(5)) -> Bool {
        stopping.value.store(true, ordering: .sequentiallyConsistent)
        let deadline = ContinuousClock.now + timeout
        repeat {
            CFRunLoopStop(runLoop)
            CFRunLoopWakeUp(runLoop)
            if exited.wait(timeout: .now() + .milliseconds(50)) == .success {
                exited.signal()  // stop() may be called again
                return true
            }
        } while ContinuousClock.now < deadline
        return false
    }

    deinit {
        stop()
    }
}

/// Names the calling thread for the kernel (`/proc/…/comm`, what reports show). Foundation's
/// `Thread.name` does not reliably reach the kernel on Linux, and `pthread_setname_np` is not
/// imported into Swift without _GNU_SOURCE.
private func setKernelThreadName(_ name: String) {
    typealias SetName = @convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32
    guard let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pthread_setname_np") else { return }
    _ = unsafeBitCast(address, to: SetName.self)(pthread_self(), String(name.prefix(15)))
}

/// Tells the loop thread to leave its loop.
/// A flag one thread sets and others read.
final class StopFlag: Sendable {
    let value = Atomic<Bool>(false)
}

/// Carries a run loop reference from its thread to the test (CF run loops are thread-safe).
private struct UncheckedLoop: @unchecked Sendable {
    let loop: CFRunLoop
}

/// The result of a closure scheduled on a loop thread, to wait for with a deadline.
final class PendingResult<T: Sendable>: Sendable {
    private let value = Mutex<T?>(nil)
    private let done = DispatchSemaphore(value: 0)

    fileprivate func fulfil(_ result: T) {
        value.withLock { $0 = result }
        done.signal()
    }

    /// Waits at most `timeout` for the closure to finish and returns its result.
    func wait(timeout: Duration = .seconds(10), what: String = "a closure on a loop thread") throws -> T {
        guard done.wait(timeout: .now() + .nanoseconds(Int(timeout.totalNanoseconds))) == .success else {
            throw TestTimeout(what: what)
        }
        done.signal()  // later waits return at once
        return value.withLock { $0! }
    }
}

extension Duration {
    var totalNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    var inMilliseconds: Double { Double(totalNanoseconds) / 1e6 }
}
