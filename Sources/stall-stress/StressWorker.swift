import CoreFoundation
import Foundation
import Glibc
import StallMonitor
import Synchronization

/// A thread running its own RunLoop, optionally watched by its own monitor (`loop: .current`),
/// that stalls as its plan says: each stall runs in a timer callout, each gap is the loop asleep
/// until the next timer. Everything it reports is read after ``join(timeout:)`` succeeded.
final class StressWorker: @unchecked Sendable {
    /// What the worker did and what its monitor saw.
    struct Outcome: Sendable {
        var threadID = 0
        var produced = 0
        /// Spans the monitor must see: stalls the loop really slept before (a busy machine may
        /// not give the thread the CPU during a gap; then the loop never waits and two stalls
        /// are one awake span, correctly reported once).
        var expectedSpans = 0
        /// Waits between 0.1 ms and 1 ms long, near the monitor's 0.2 ms re-entry grace
        /// (whether they split a span depends on clock-read timing; counted to show there were none).
        var ambiguousWaits = 0
        var shortest = Double.infinity
        var longest = 0.0
        var statistics: StallMonitor.Statistics?
        var sessionRecord: URL?
        var flushed = true
        var startError: String?
    }

    let index: Int
    private let plan: StressPlan
    private let configuration: StallMonitor.Configuration?
    private let outcome = Mutex(Outcome())
    private let finished = DispatchSemaphore(value: 0)
    /// Set by the last step's callout; the loop leaves then.
    private let done = Atomic<Bool>(false)

    /// A worker for `plan`; with a nil configuration it runs unmonitored (the baseline).
    init(index: Int, plan: StressPlan, configuration: StallMonitor.Configuration?) {
        self.index = index
        self.plan = plan
        self.configuration = configuration
    }

    /// Starts the thread.
    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "stress-\(index)"
        thread.start()
    }

    /// Waits for the plan to finish and the monitor to stop; nil on timeout.
    func join(timeout: Duration) -> Outcome? {
        let nanos = Int(timeout.components.seconds) * 1_000_000_000
        guard finished.wait(timeout: .now() + .nanoseconds(nanos)) == .success else { return nil }
        return outcome.withLock { $0 }
    }

    private func run() {
        outcome.withLock { $0.threadID = ProcessCounts.currentThreadID() }
        var monitor: StallMonitor?
        if let configuration {
            do {
                monitor = try StallMonitor.start(configuration, loop: .current)
            } catch {
                outcome.withLock { $0.startError = "\(error)" }
                finished.signal()
                return
            }
        }
        // CF timers, not Foundation's Timer: swift-corelibs-foundation's block-based Timer is never
        // freed (LeakSanitizer reports every one), which would hide real leaks in the leak run.
        let keepAlive = CFRunLoopTimerCreateWithHandler(nil, .greatestFiniteMagnitude, 0, 0, 0) { _ in }
        CFRunLoopAddTimer(CFRunLoopGetCurrent(), keepAlive, kCFRunLoopDefaultMode)
        let sleeps = observeSleeps()
        scheduleStep(0)
        while !done.load(ordering: .acquiring) {
            _ = RunLoop.current.run(mode: .default, before: .distantFuture)
        }
        CFRunLoopTimerInvalidate(keepAlive)
        CFRunLoopRemoveObserver(CFRunLoopGetCurrent(), sleeps, kCFRunLoopCommonModes)
        if let monitor {
            let flushed = monitor.flush(timeout: .seconds(120))
            monitor.stop()
            let statistics = monitor.statistics
            outcome.withLock {
                $0.flushed = flushed
                $0.statistics = statistics
                $0.sessionRecord = monitor.sessionRecordURL
            }
        }
        finished.signal()
    }

    /// Schedules step `number` after its idle gap; after the last step, sets `done`.
    private func scheduleStep(_ number: Int) {
        guard number < plan.steps.count else {
            done.store(true, ordering: .releasing)
            CFRunLoopStop(CFRunLoopGetCurrent())  // a timer firing does not end run(mode:before:)
            return
        }
        let step = plan.steps[number]
        // An explicit fire date (swift-corelibs-foundation's Timer(timeInterval:repeats:block:)
        // fires at once instead of after the interval); a one-shot CF timer is released once fired.
        let fireAt = CFAbsoluteTimeGetCurrent() + Double(step.gapMs) / 1000
        let timer = CFRunLoopTimerCreateWithHandler(nil, fireAt, 0, 0, 0) { [self] _ in
            let slept = sleptSinceLastStall
            sleptSinceLastStall = false
            let milliseconds = Self.stall(step)
            outcome.withLock {
                $0.produced += 1
                if slept { $0.expectedSpans += 1 }
                $0.shortest = min($0.shortest, milliseconds)
                $0.longest = max($0.longest, milliseconds)
            }
            scheduleStep(number + 1)
        }
        CFRunLoopAddTimer(CFRunLoopGetCurrent(), timer, kCFRunLoopDefaultMode)
    }

    // Touched only on the worker thread (observer callbacks and timer callouts).
    private var sleptSinceLastStall = false
    private var waitBegan: UInt64 = 0

    /// Watches the loop's own waits: a wait longer than the monitor's re-entry grace (0.2 ms)
    /// ends an awake span, so the next stall is a span of its own.
    private func observeSleeps() -> CFRunLoopObserver {
        let activities = CFRunLoopActivity.beforeWaiting.rawValue | CFRunLoopActivity.afterWaiting.rawValue
        let observer = CFRunLoopObserverCreateWithHandler(nil, activities, true, 0) { [self] _, activity in
            let now = DispatchTime.now().uptimeNanoseconds
            if activity == .beforeWaiting {
                waitBegan = now
                return
            }
            let waited = now - waitBegan
            if waited > 200_000 { sleptSinceLastStall = true }
            if waited > 100_000 && waited < 1_000_000 { outcome.withLock { $0.ambiguousWaits += 1 } }
        }!
        CFRunLoopAddObserver(CFRunLoopGetCurrent(), observer, kCFRunLoopCommonModes)
        return observer
    }

    /// Performs one stall; returns how long it took (ms).
    private static func stall(_ step: StressPlan.Step) -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        let end = start + UInt64(step.stallMs) * 1_000_000
        switch step.kind {
        case .spin:
            StressWork.spinForStress(until: end)
        case .sleep:
            StressWork.sleepForStress(until: end)
        }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
    }
}

/// The stalling functions (named, so the reports show them).
enum StressWork {
    @inline(never)
    static func spinForStress(until end: UInt64) {
        var sink: UInt64 = 0
        while DispatchTime.now().uptimeNanoseconds < end {
            for value in 0..<1_000 { sink = sink &* 31 &+ UInt64(value) }
        }
        if sink == 42 { print("", terminator: "") }
    }

    @inline(never)
    static func sleepForStress(until end: UInt64) {
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < end else { return }
            usleep(UInt32((end - now) / 1_000))
        }
    }
}
