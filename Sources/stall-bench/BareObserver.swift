import CoreFoundation

/// Run-loop observers with empty callbacks for the activities StallMonitor's run-loop probe
/// observes, at the same orders (entry, beforeTimers and afterWaiting first; beforeWaiting and
/// exit last), in the common modes: what CoreFoundation's own dispatch of those activities costs
/// a loop, the baseline of figure 1a.
final class BareObserver {
    /// The activities the probe observes first (`RunLoopProbe.openingActivities`).
    static let openingActivities: CFOptionFlags =
        CFRunLoopActivity.entry.rawValue | CFRunLoopActivity.beforeTimers.rawValue
        | CFRunLoopActivity.afterWaiting.rawValue
    /// The activities the probe observes last (`RunLoopProbe.suspendingActivities`).
    static let suspendingActivities: CFOptionFlags =
        CFRunLoopActivity.beforeWaiting.rawValue | CFRunLoopActivity.exit.rawValue

    private var observers: [CFRunLoopObserver]

    /// Adds the two observers to the main run loop.
    init() {
        // A C function pointer with no context, as the probe's callbacks are (no closure to call).
        let callout: CFRunLoopObserverCallBack = { _, _, _ in }
        var context = CFRunLoopObserverContext(version: 0, info: nil, retain: nil, release: nil, copyDescription: nil)
        observers = [
            CFRunLoopObserverCreate(nil, Self.openingActivities, true, Int.min, callout, &context),
            CFRunLoopObserverCreate(nil, Self.suspendingActivities, true, Int.max, callout, &context),
        ]
        for observer in observers { CFRunLoopAddObserver(CFRunLoopGetMain(), observer, kCFRunLoopCommonModes) }
    }

    /// Removes the observers from the loop.
    func remove() {
        for observer in observers { CFRunLoopObserverInvalidate(observer) }
        observers = []
    }
}
