import CStallMonitor
import CoreFoundation

/// Feeds a ``SpanTracker`` from `CFRunLoopObserver`s on one run loop in the common modes.
/// The callback is a C function pointer: it reads the monotonic clock (vDSO) and updates atomics.
final class RunLoopProbe: @unchecked Sendable {
    /// The activities observed: entry, beforeTimers (loop passes), beforeWaiting, afterWaiting, exit.
    static let activities: CFOptionFlags =
        CFRunLoopActivity.entry.rawValue | CFRunLoopActivity.beforeTimers.rawValue |
        CFRunLoopActivity.beforeWaiting.rawValue | CFRunLoopActivity.afterWaiting.rawValue |
        CFRunLoopActivity.exit.rawValue

    private let runLoop: CFRunLoop
    private let observer: CFRunLoopObserver

    /// Creates the observer and adds it to `runLoop`. The observer keeps `tracker` alive.
    init(runLoop: CFRunLoop, tracker: SpanTracker) {
        self.runLoop = runLoop
        var context = CFRunLoopObserverContext(
            version: 0,
            info: Unmanaged.passUnretained(tracker).toOpaque(),
            retain: { info in
                guard let info else { return nil }
                _ = Unmanaged<SpanTracker>.fromOpaque(info).retain()
                return UnsafeRawPointer(info)
            },
            release: { info in
                guard let info else { return }
                Unmanaged<SpanTracker>.fromOpaque(info).release()
            },
            copyDescription: nil)
        // Order LONG_MIN - 1 … : run before other observers so their work counts in the span.
        observer = CFRunLoopObserverCreate(nil, Self.activities, true, Int.min, { _, activity, info in
            guard let info else { return }
            // The observer holds a reference (context retain): no retain/release per callback.
            Unmanaged<SpanTracker>.fromOpaque(info)._withUnsafeGuaranteedRef {
                $0.record(UInt(activity.rawValue), at: CStallMonitor_monotonic_ns())
            }
        }, &context)
        CFRunLoopAddObserver(runLoop, observer, kCFRunLoopCommonModes)
    }

    /// Removes and invalidates the observer; callbacks stop.
    func remove() {
        CFRunLoopRemoveObserver(runLoop, observer, kCFRunLoopCommonModes)
        CFRunLoopObserverInvalidate(observer)
    }
}
