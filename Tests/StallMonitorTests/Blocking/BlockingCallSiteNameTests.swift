import Testing

@testable import StallMonitor

/// Which frame of a blocking call's stack is named as the app's call site.
@Suite("blocking call site names")
struct BlockingCallSiteNameTests {
    static func call(_ names: [String]) -> BlockingCall {
        BlockingCall(
            call: "sem_timedwait", duration: .milliseconds(20), startNanoseconds: 0, threadID: 1, inTask: true,
            drainsMainQueue: false,
            frames: names.enumerated().map { .init(address: UInt($0.offset + 1), function: $0.element) })
    }

    @Test("the app's frame is the call site, not the library's, the runtime's or a thread's entry")
    func appFrame() {
        let named = Self.call([
            "_dispatch_sema4_timedwait",
            "Dispatch.DispatchSemaphore.wait(wallTimeout: Dispatch.DispatchWallTime) -> Dispatch.DispatchTimeoutResult",
            "static App.CacheController.lookup(milliseconds: Swift.Int) async -> Swift.String",
            "swift::runJobInEstablishedExecutorContext(swift::Job*)",
            "_dispatch_worker_thread", "start_thread",
        ])
        #expect(
            named.callSite?.function
                == "static App.CacheController.lookup(milliseconds: Swift.Int) async -> Swift.String")
    }

    @Test("with no app frame, the innermost named frame is the call site, never the thread's entry")
    func noAppFrame() {
        let named = Self.call([
            "_dispatch_sema4_timedwait", "_dispatch_semaphore_wait_slow",
            "swift::runJobInEstablishedExecutorContext(swift::Job*)",
            "_dispatch_worker_thread", "start_thread", "clone3",
        ])
        #expect(named.callSite?.function == "_dispatch_sema4_timedwait")
    }
}
