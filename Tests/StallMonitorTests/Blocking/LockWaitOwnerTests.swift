import Testing

@testable import StallMonitor

/// Lock waits on the locks of SwiftNIO and the Swift runtime are theirs by design; waits on the
/// app's own locks are recorded. The stacks are those a Hummingbird 2 server's monitor recorded
/// under wrk on a loaded machine (leaf first, demangled as the symbolicator names them).
@Suite("Lock wait owners")
struct LockWaitOwnerTests {
    static let nioLock = [
        "static NIOConcurrencyHelpers.LockOperations.lock(Swift.UnsafeMutablePointer<__C.pthread_mutex_t>) -> ()",
        "closure #1 (Swift.UnsafeMutablePointer<__C.pthread_mutex_t>) -> () in NIOConcurrencyHelpers.LockStorage.lock() -> ()",
        "(extension in Swift):Swift.ManagedBuffer< where B: ~Swift.Copyable>.withUnsafeMutablePointerToElements<A, B where A1: Swift.Error, B1: ~Swift.Copyable>((Swift.UnsafeMutablePointer<B>) throws(A1) -> B1) throws(A1) -> B1",
        "NIOConcurrencyHelpers.LockStorage.lock() -> ()",
        "NIOConcurrencyHelpers.NIOLock.lock() -> ()",
        "NIOConcurrencyHelpers.NIOLock.withLock<A>(() throws -> A) throws -> A",
    ]

    @Test("SwiftNIO's own lock (the selector's wake-up, the async sequence producer) is NIO's")
    func nioOwnLocks() {
        let owners = BlockingCallDetector.Configuration.defaultAllowedLockOwners
        let wakeup = Self.nioLock + ["NIOPosix.Selector.wakeup0() throws -> ()", "App.handler() -> ()"]
        #expect(LockWaitOwner.isAllowed(call: "pthread_mutex_lock", frames: wakeup, owners: owners))
        let producer =
            Self.nioLock.prefix(1) + [
                "closure #1 (Swift.UnsafeMutablePointer<A>, Swift.UnsafeMutablePointer<__C.pthread_mutex_t>) throws -> A1 in NIOConcurrencyHelpers.LockStorage.withLockedValue<A>((inout A) throws -> A1) throws -> A1",
                "partial apply forwarder for closure #1 (Swift.UnsafeMutablePointer<A>, Swift.UnsafeMutablePointer<__C.pthread_mutex_t>) throws -> A1 in NIOConcurrencyHelpers.LockStorage.withLockedValue<A>((inout A) throws -> A1) throws -> A1",
                "NIOConcurrencyHelpers.NIOLockedValueBox.withLockedValue<A>((inout A) throws -> A1) throws -> A1",
                "NIOCore.NIOThrowingAsyncSequenceProducer.Storage.yield<A where A == A1.Element, A1: Swift.Sequence>(A1) -> NIOCore.NIOThrowingAsyncSequenceProducer<A, B, C, D>.Source.YieldResult",
            ]
        #expect(LockWaitOwner.isAllowed(call: "pthread_mutex_lock", frames: Array(producer), owners: owners))
        let runtime = [
            "withStatusRecordLock(swift::AsyncTask*, swift::ActiveTaskStatus, __swift::__runtime::llvm::function_ref<void (swift::ActiveTaskStatus)>)",
            "swift::AsyncTask::flagAsAndEnqueueOnExecutor(swift::SerialExecutorRef)",
        ]
        #expect(LockWaitOwner.isAllowed(call: "pthread_mutex_lock", frames: runtime, owners: owners))
    }

    @Test("the app's own lock, a non-lock call, or no allowed owner: recorded")
    func appLocksRecorded() {
        let owners = BlockingCallDetector.Configuration.defaultAllowedLockOwners
        let appLock = Self.nioLock + ["closure #1 () -> () in static App.Cache.lookup(key: Swift.String) -> ()"]
        #expect(!LockWaitOwner.isAllowed(call: "pthread_mutex_lock", frames: appLock, owners: owners))
        let mutex = [
            "Synchronization._MutexHandle._lockSlow(Swift.UInt32) -> ()", nil,
            "App.Counter.increment() -> ()",
        ]
        #expect(!LockWaitOwner.isAllowed(call: "futex", frames: mutex, owners: owners))
        let wakeup = Self.nioLock + ["NIOPosix.Selector.wakeup0() throws -> ()"]
        #expect(!LockWaitOwner.isAllowed(call: "usleep", frames: wakeup, owners: owners))
        #expect(!LockWaitOwner.isAllowed(call: "pthread_mutex_lock", frames: wakeup, owners: []))
    }

    @Test("the module of closures, witnesses, extensions and static functions")
    func modules() {
        #expect(
            LockWaitOwner.module(of: "closure #2 () throws -> () in NIOPosix.SelectableEventLoop.run() throws -> ()")
                == "NIOPosix")
        #expect(
            LockWaitOwner.module(
                of:
                    "protocol witness for NIOCore.EventLoop.execute(() -> ()) -> () in conformance NIOPosix.SelectableEventLoop : NIOCore.EventLoop in NIOPosix"
            ) == "NIOPosix")
        #expect(
            LockWaitOwner.module(
                of:
                    "(extension in NIOCore):NIOCore._ChannelInboundHandler.channelReadComplete(context: NIOCore.ChannelHandlerContext) -> ()"
            ) == "NIOCore")
        #expect(LockWaitOwner.module(of: "static App.Database.fetchUser(id: Swift.Int) -> ()") == "App")
        #expect(
            LockWaitOwner.module(of: "reabstraction thunk helper from @escaping @callee_guaranteed () -> ()") == nil)
    }
}
