import CoreFoundation
import Foundation
import Synchronization

/// Counts the main loop's wake-ups (`afterWaiting`) with an observer of its own, so an idle
/// figure can tell the monitor's wake-ups from the loop's.
final class WakeCounter: @unchecked Sendable {
    private let count = Atomic<Int>(0)
    private var observer: CFRunLoopObserver?

    init() {
        observer = CFRunLoopObserverCreateWithHandler(nil, CFRunLoopActivity.afterWaiting.rawValue, true, 0) {
            [self] _, _ in
            count.add(1, ordering: .relaxed)
            if ProcessInfo.processInfo.environment["STALL_BENCH_VERBOSE"] != nil {
                log("   loop woke at \(Double(CStallClock.now() % 100_000_000_000) / 1e9) s")
            }
        }
        CFRunLoopAddObserver(CFRunLoopGetMain(), observer, kCFRunLoopCommonModes)
    }

    var value: Int { count.load(ordering: .relaxed) }

    func remove() {
        if let observer { CFRunLoopObserverInvalidate(observer) }
        observer = nil
    }
}
