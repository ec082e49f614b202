extension StallMonitor {
    /// Why `RunLoop.main` will never run in this program (its main thread is parked by `async
    /// main` or `dispatchMain()`, or gone); nil when it may. Lets integrations (the ServiceLifecycle
    /// service) refuse `.main` when they are set up instead of failing once they run.
    package static func whyMainRunLoopNeverRuns() -> String? {
        MainThreadState.whyNoMainRunLoop()
    }
}
