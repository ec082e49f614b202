import CStallMonitor

/// Finds calls that put a thread that must never block to sleep in the kernel: `usleep`,
/// `read`/`write`/`recv`/`accept`/`connect` that wait, `poll`/`select`, `open`/`fsync`/`stat`,
/// `pthread_mutex_lock`/`pthread_cond_wait` contention, `sem_wait` (`DispatchSemaphore`), futex
/// waits (`DispatchGroup.wait`, `DispatchQueue.sync`, `Synchronization.Mutex`), `waitpid`.
///
/// Threads that must not block are those that run a Swift task job (concurrency-pool workers,
/// the main thread running MainActor async work) and threads marked with
/// ``markMustNotBlock(_:)``. A call is timed only there, and recorded when it took at least the
/// threshold; anything else pays a few loads. See <doc:FindingBlockingCalls>.
///
/// ```swift
/// let detector = try BlockingCallDetector.start(.init(threshold: .milliseconds(5)))
/// defer { detector.stop() }
/// // … run the app …
/// for call in detector.takeCalls() { print(call) }
/// ```
public final class BlockingCallDetector: Sendable {
    /// What a detector records.
    public struct Configuration: Sendable {
        /// The shortest call recorded. Default 10 ms (1 ms in tests).
        public var threshold: Duration
        /// A call whose stack has a frame whose function name contains one of these is not
        /// recorded: work that blocks by design (the defaults: one-time initialisation, lazy
        /// symbol binding, the Swift runtime's metadata caches).
        public var allowedFunctions: [String]
        /// A wait for a lock (`pthread_mutex_lock`, a futex) is not recorded when the lock was
        /// taken by a module whose name starts with one of these: the innermost frame of the
        /// waiter's stack that is not the lock's own machinery (`NIOLock`, `Mutex`, the standard
        /// library) is that module's. The defaults: SwiftNIO's own locks and the Swift runtime's,
        /// whose critical sections are short and are waited for only while their holder is
        /// preempted. Waits on the app's own locks are recorded.
        public var allowedLockOwners: [String]

        /// A configuration; `threshold` defaults to 10 ms.
        public init(
            threshold: Duration = .milliseconds(10),
            allowedFunctions: [String] = Configuration.defaultAllowedFunctions,
            allowedLockOwners: [String] = Configuration.defaultAllowedLockOwners
        ) {
            self.threshold = threshold
            self.allowedFunctions = allowedFunctions
            self.allowedLockOwners = allowedLockOwners
        }

        /// SwiftNIO's modules (`NIOCore`, `NIOPosix`, …), the Swift runtime (`swift::`) and its
        /// concurrency library.
        public static let defaultAllowedLockOwners = ["NIO", "_NIO", "swift::", "_Concurrency"]

        /// Functions that block by design and are allowed out of the box.
        public static let defaultAllowedFunctions = [
            "swift_once", "swift_getGenericMetadata", "swift_getSingletonMetadata", "swift_conformsToProtocol",
            "swift::MetadataCache", "__cxa_guard_acquire", "_dl_runtime_resolve", "_dl_fixup", "dlopen", "pthread_once",
        ]
    }

    /// Why a detector cannot start.
    public enum StartError: Error, Sendable, CustomStringConvertible {
        /// The C library's functions could not be found with `dlsym` (a fully static binary).
        case unresolvedFunctions
        /// The process is built with ThreadSanitizer, whose runtime owns the same functions.
        case threadSanitizer

        /// One sentence.
        public var description: String {
            switch self {
            case .unresolvedFunctions:
                "blocking calls cannot be watched: the C library's functions are not found with dlsym (a fully static binary?)"
            case .threadSanitizer:
                "blocking calls cannot be watched in a build with ThreadSanitizer (its runtime owns the same functions)"
            }
        }
    }

    /// The configuration the detector was started with.
    public let configuration: Configuration
    /// Calls that no image loaded at start makes through its GOT, so none of their uses is seen
    /// (an image loaded later is not seen until a detector starts again): often calls no code of
    /// the process uses, but also every call of a fully static binary.
    public let unseenCalls: [String]
    /// Calls the executable itself makes without passing its GOT, or never makes: its own
    /// uses of them (code linked into it statically) are not seen.
    public let callsUnseenInExecutable: [String]

    private let id: UInt64
    private let scoped: Bool
    private let dropped = Locked<UInt64>(0)

    private init(
        configuration: Configuration, scoped: Bool, onRecords: (@Sendable () -> Void)? = nil
    ) throws(StartError) {
        let nanoseconds =
            configuration.threshold.components.seconds * 1_000_000_000
            + configuration.threshold.components.attoseconds / 1_000_000_000
        let (id, installation) = try MonitorProcess.shared.blockingCalls.subscribe(
            thresholdNanoseconds: UInt64(max(0, nanoseconds)), scoped: scoped, onRecords: onRecords)
        self.id = id
        self.scoped = scoped
        self.configuration = configuration
        self.unseenCalls = installation.unseen
        self.callsUnseenInExecutable = installation.unseenInExecutable
    }

    /// Starts recording blocking calls made anywhere in the process.
    public static func start(
        _ configuration: Configuration = Configuration()
    ) throws(StartError) -> BlockingCallDetector {
        try BlockingCallDetector(configuration: configuration, scoped: false)
    }

    /// Starts a detector (scoped: see ``startScoped(_:)``) whose `onRecords` is called (on the
    /// collector's thread: it must be quick) when calls were recorded that ``takeCalls()`` has not
    /// taken yet, so the taker needs no timer of its own while none come.
    static func start(
        _ configuration: Configuration, scoped: Bool = false, onRecords: @escaping @Sendable () -> Void
    ) throws(StartError) -> BlockingCallDetector {
        try BlockingCallDetector(configuration: configuration, scoped: scoped, onRecords: onRecords)
    }

    /// Starts a detector that records only the calls made inside the bodies of its `attributing`
    /// of its own (and the tasks they create that inherit task-local values): a test's calls,
    /// apart from those of tests running beside it.
    public static func startScoped(
        _ configuration: Configuration = Configuration()
    ) throws(StartError) -> BlockingCallDetector {
        try BlockingCallDetector(configuration: configuration, scoped: true)
    }

    /// Runs `body` with its calls (and those of the tasks it creates) attributed to this detector.
    public func attributing<T>(_ body: () async throws -> T) async rethrows -> T {
        try await BlockingCallScope.$id.withValue(id) { try await body() }
    }

    /// Runs `body` on this thread with its calls attributed to this detector.
    public func attributing<T>(_ body: () throws -> T) rethrows -> T {
        try BlockingCallScope.$id.withValue(id) { try body() }
    }

    /// The calls recorded since the last take, oldest first, with their stacks named.
    public func takeCalls() -> [BlockingCall] { takeCallsAndDrops().calls }

    /// The calls recorded since the last take, and ``droppedCalls`` before and after it.
    func takeCallsAndDrops() -> (calls: [BlockingCall], droppedBefore: UInt64, droppedAfter: UInt64) {
        let (records, droppedNow) = MonitorProcess.shared.blockingCalls.take(id)
        let (before, after) = dropped.withLock { total in
            defer { total += droppedNow }
            return (total, total + droppedNow)
        }
        let calls = BlockingCallNaming.calls(
            from: records, allowing: configuration.allowedFunctions, lockOwners: configuration.allowedLockOwners)
        return (calls, before, after)
    }

    /// Calls not recorded because the recorder's slots were all full (taken less often than
    /// calls blocked), since start.
    public var droppedCalls: UInt64 { dropped.withLock { $0 } }

    /// Stops recording; calls not taken yet are lost.
    public func stop() {
        MonitorProcess.shared.blockingCalls.unsubscribe(id)
    }

    /// Runs `body` with blocking calls allowed on this thread (Chromium's `ScopedAllowBlocking`):
    /// none of its calls is recorded by any detector. Keep the scope narrow.
    public static func allowBlocking<T>(_ body: () throws -> T) rethrows -> T {
        CStallMonitor_blocking_allow(1)
        defer { CStallMonitor_blocking_allow(0) }
        return try body()
    }

    /// Marks the calling thread as one that must not block (`true`) or ends a mark (`false`),
    /// whatever it runs: for a thread that runs a loop of its own. Marks are counted.
    public static func markMustNotBlock(_ mustNotBlock: Bool) {
        CStallMonitor_blocking_thread_mark(mustNotBlock ? 1 : 0)
    }
}
