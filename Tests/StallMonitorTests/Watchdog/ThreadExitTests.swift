import CoreFoundation
import Foundation
import Glibc
import StallMonitor
import StallReportKit
import Synchronization
import Testing

/// The loop thread that exits during a stall, and what the test needs of it. Global (and the
/// thread's own functions keep no references in their frames when it exits), so that nothing
/// the exiting thread held is left unreachable.
private final class ExitingLoop: @unchecked Sendable {
    let started = DispatchSemaphore(value: 0)
    // Written by the loop thread before `started` is signalled, read by the test afterwards.
    var configuration: StallMonitor.Configuration?
    var monitor: StallMonitor?
    var startError: StallMonitorError?
    var runLoop: CFRunLoop?
    var source: CFRunLoopSource?
    /// When the loop thread called pthread_exit (monotonic ns).
    let exitedAt = Atomic<UInt64>(0)
    static let spinNanoseconds: UInt64 = 600_000_000
}

private let exitingLoop = ExitingLoop()

private func exitingLoopThreadMain() {
    prepareExitingLoop()
    CFRunLoopRun()  // the source's callout spins, then calls pthread_exit: never returns
}

@inline(never)
private func prepareExitingLoop() {
    let state = exitingLoop
    state.runLoop = CFRunLoopGetCurrent()
    var context = CFRunLoopSourceContext()
    context.perform = { _ in spinThenExitThread() }
    let source = CFRunLoopSourceCreate(nil, 0, &context)
    state.source = source
    CFRunLoopAddSource(CFRunLoopGetCurrent(), source, kCFRunLoopDefaultMode)
    do {
        state.monitor = try StallMonitor.start(state.configuration!, loop: .current)
    } catch {
        state.startError = error
    }
    state.started.signal()
}

/// Spins on the CPU, then ends the thread in the middle of the loop's callout.
@inline(never)
private func spinThenExitThread() -> Never {
    let end = Kernel.monotonicNanoseconds() + ExitingLoop.spinNanoseconds
    while Kernel.monotonicNanoseconds() < end {}
    exitingLoop.exitedAt.store(Kernel.monotonicNanoseconds(), ordering: .releasing)
    pthread_exit(nil)
}

@Suite("A watched thread that exits during a stall", .serialized)
struct ThreadExitTests {
    @Test(
        "pthread_exit in a 600 ms stall: the stall ends by itself (not at stop), no longer than the thread ran; the watchdog stops looking; said once"
    )
    func exitedThreadEndsItsSpan() throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        var configuration = directory.configuration()
        let log = CapturingLogHandler.capture(&configuration)
        exitingLoop.configuration = configuration

        var thread = pthread_t()
        try #require(
            pthread_create(
                &thread, nil,
                { _ in
                    exitingLoopThreadMain()
                    return nil
                }, nil) == 0)
        try #require(exitingLoop.started.wait(timeout: .now() + 10) == .success, "the loop thread did not start")
        let monitor = try #require(exitingLoop.monitor, "start failed: \(String(describing: exitingLoop.startError))")
        defer { monitor.stop() }

        let signalledAt = Kernel.monotonicNanoseconds()
        CFRunLoopSourceSignal(exitingLoop.source)
        CFRunLoopWakeUp(exitingLoop.runLoop)
        #expect(pthread_join(thread, nil) == 0)  // it exited
        let exitedAt = exitingLoop.exitedAt.load(ordering: .acquiring)
        try #require(exitedAt > signalledAt)

        // The span ends without stop(): reported, or discarded as short when the watchdog last
        // saw the thread alive before the threshold (a starved watchdog), and said once.
        let ended = waitUntil(timeout: .seconds(20)) {
            let statistics = monitor.statistics
            return statistics.errors["threadExited"] != nil
                && (statistics.stallsDetected + statistics.shortSpansDiscarded) >= 1
        }
        #expect(ended, "\(monitor.statistics)")
        #expect(monitor.flush())
        let statistics = monitor.statistics
        #expect(statistics.errors["threadExited"] == 1, "\(statistics.errors)")
        #expect(log.messages.filter { $0.contains("watched thread exited") }.count == 1, "\(log.messages)")
        let reports = try directory.reports()
        #expect(reports.count == statistics.stallsDetected, "\(directory.entries())")
        if let report = reports.first {
            #expect(report.status == .ended)
            // No longer than the thread was alive after the loop was woken: the watchdog may still
            // see it alive between its last clock read (`exitedAt`) and its exit, so the end is
            // known to a sampling interval (10 ms); 50 ms of slack (without the fix: seconds).
            #expect(report.durationMs <= Double(exitedAt - signalledAt) / 1e6 + 50, "\(report.durationMs) ms")
            #expect(report.durationMs >= 250)
            #expect(report.anySampleNames("spinThenExitThread"))
        }

        // The watchdog no longer looks at the dead thread (it woke every 10 ms before).
        let wakeups = monitor.statistics.watchdogWakeups
        usleep(300_000)
        #expect(
            monitor.statistics.watchdogWakeups - wakeups <= 3,
            "\(monitor.statistics.watchdogWakeups - wakeups) wake-ups in 300 ms")

        // stop() reports nothing more (the span is not taken to last until now) and is prompt.
        let detected = monitor.statistics.stallsDetected
        monitor.stop()
        #expect(monitor.statistics.stallsDetected == detected)
        #expect(try directory.reports().count == reports.count)
    }
}
