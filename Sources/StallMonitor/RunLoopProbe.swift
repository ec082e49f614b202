import CStallMonitor
import CoreFoundation

/// Feeds a ``SpanTracker`` from `CFRunLoopObserver`s on one run loop in the common modes.
/// The callback is a C function pointer: it reads the monotonic clock (vDSO) and updates atomics.
///
/// Two observers, so that the work of every other observer counts in the span: one ordered first
/// for the activities that open a span or a pass (entry, beforeTimers, afterWaiting), one ordered
/// last for those that suspend it (beforeWaiting, exit). Work other observers do when the loop is
/// about to wait (an ``IdleWorkQueue``'s items, say) is still inside the span.
final class RunLoopProbe: @unchecked Sendable {
    /// The activities observed first: entry, beforeTimers (loop passes), afterWaiting.
    static let openingActivities: CFOptionFlags =
        CFRunLoopActivity.entry.rawValue | CFRunLoopActivity.beforeTimers.rawValue |
        CFRunLoopActivity.afterWaiting.rawValue
    /// The activities observed last: beforeWaiting and exit.
    static let suspendingActivities: CFOptionFlags =
        CFRunLoopActivity.beforeWaiting.rawValue | CFRunLoopActivity.exit.rawValue

    private let runLoop: CFRunLoop
    private let observers: [CFRunLoopObserver]

    /// Creates the observers and adds them to `runLoop`. The observers keep `tracker` alive.
    init(runLoop: CFRunLoop, tracker: SpanTracker) {
        self.runLoop = runLoop
        observers = [
            Self.observer(Self.openingActivities, order: Int.min, tracker: tracker),
            Self.observer(Self.suspendingActivities, order: Int.max, tracker: tracker),
        ]
        for observer in observers { CFRunLoopAddObserver(runLoop, observer, kCFRunLoopCommonModes) }
    }

    private static func observer(_ activities: CFOptionFlags, order: Int, tracker: SpanTracker) -> CFRunLoopObserver {
        RunLoopObserver.make(activities, order: order, info: tracker) { _, activity, info in
            guard let info else { return }
            // The observer holds a reference (context retain): no retain/release per callback.
            Unmanaged<SpanTracker>.fromOpaque(info)._withUnsafeGuaranteedRef {
                $0.record(UInt(activity.rawValue), at: CStallMonitor_monotonic_ns())
            }
        }
    }

    /// Removes and invalidates the observers; callbacks stop.
    func remove() {
        for observer in observers {
            CFRunLoopRemoveObserver(runLoop, observer, kCFRunLoopCommonModes)
            CFRunLoopObserverInvalidate(observer)
        }
    }
}
