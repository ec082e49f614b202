import CoreFoundation

/// Creates `CFRunLoopObserver`s whose C callback gets an object of ours as `info`: the observer
/// retains the object for as long as it exists, so the callback needs no retain or release.
enum RunLoopObserver {
    /// A repeating observer of `activities` at `order` (lower runs first) calling `callout` with
    /// `object` as its `info`.
    static func make(
        _ activities: CFOptionFlags, order: Int, info object: AnyObject,
        callout: CFRunLoopObserverCallBack
    ) -> CFRunLoopObserver {
        var context = CFRunLoopObserverContext(
            version: 0,
            info: Unmanaged.passUnretained(object).toOpaque(),
            retain: { info in
                guard let info else { return nil }
                _ = Unmanaged<AnyObject>.fromOpaque(info).retain()
                return UnsafeRawPointer(info)
            },
            release: { info in
                guard let info else { return }
                Unmanaged<AnyObject>.fromOpaque(info).release()
            },
            copyDescription: nil)
        return CFRunLoopObserverCreate(nil, activities, true, order, callout, &context)
    }
}
