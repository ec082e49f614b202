import CoreFoundation
import Foundation
import StallMonitor
import Synchronization

/// A timer that asks to fire `interval` after each time it fired, and records how late each fire
/// was: the loop's responsiveness as a user of the loop sees it.
final class LatenessProbe: @unchecked Sendable {
    private let interval: Double
    private var timer: CFRunLoopTimer?
    private var expected: UInt64 = 0
    private(set) var latenessMs: [Double] = []

    init(interval: Double) {
        self.interval = interval
    }

    /// Adds the timer to `runLoop` (common modes). Call on the loop's thread.
    func start(on runLoop: CFRunLoop) {
        expected = Kernel.monotonicNanoseconds() + UInt64(interval * 1e9)
        let timer = CFRunLoopTimerCreateWithHandler(nil, CFAbsoluteTimeGetCurrent() + interval, 1e9, 0, 0) {
            [unowned self] timer in
            let now = Kernel.monotonicNanoseconds()
            latenessMs.append(now > expected ? Double(now - expected) / 1e6 : 0)
            expected = now + UInt64(interval * 1e9)
            CFRunLoopTimerSetNextFireDate(timer, CFAbsoluteTimeGetCurrent() + interval)
        }
        CFRunLoopAddTimer(runLoop, timer, kCFRunLoopCommonModes)
        self.timer = timer
    }

    /// Removes the timer.
    func stop() {
        if let timer { CFRunLoopTimerInvalidate(timer) }
        timer = nil
    }
}

/// A count shared between the loop's work and the code that waits for it.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    /// Adds one; returns the new count.
    func increment() -> Int { count.add(1, ordering: .acquiringAndReleasing).newValue }
    var value: Int { count.load(ordering: .acquiring) }
}

/// The stalls reported during one run (from the monitor's `onReport`).
final class StallLog: Sendable {
    /// The longest duration's bit pattern (an atomic, so ThreadSanitizer sees the order).
    private let longest = Atomic<UInt64>(0)
    func record(durationMs: Double) {
        var current = longest.load(ordering: .relaxed)
        while durationMs > Double(bitPattern: current) {
            let (exchanged, original) = longest.compareExchange(
                expected: current, desired: durationMs.bitPattern, ordering: .acquiringAndReleasing)
            if exchanged { break }
            current = original
        }
    }
    func reset() { longest.store(0, ordering: .releasing) }
    var longestMs: Double { Double(bitPattern: longest.load(ordering: .acquiring)) }
}
