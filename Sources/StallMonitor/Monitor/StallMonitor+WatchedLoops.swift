extension StallMonitor {
    /// A loop the monitor watches, as it is now.
    public struct WatchedLoop: Sendable, Equatable {
        /// The loop kind reports name: `runLoop`, `nioEventLoop`, `mainActor`.
        public var kind: String
        /// Whether the loop has been seen running since the monitor started. A loop that has not
        /// within ``Configuration/loopSilenceWarning`` is said through the logger: nothing of it is
        /// watched (e.g. `RunLoop.main` in a program whose main thread never runs it).
        public var hasRun: Bool
        /// The kernel id of the loop's thread, once it has run (for the MainActor: the worker
        /// thread that ran its latest span, or the first one seen).
        public var threadID: Int32?
        /// The name of the loop's thread (an event loop's `NIO-ELT-0-#1`), once it has run.
        public var threadName: String?
    }

    /// The loops this monitor watches (one run loop, or every event loop of a group) and whether
    /// each has run yet.
    public var watchedLoops: [WatchedLoop] {
        // A shared loop's slots (the concurrency pool's) are one loop: listed once, with the
        // worker of its latest span.
        oneEachPerSharedLoop(threads) { $0.probe.sharedLoop }.map { thread in
            // A loop whose thread changes from span to span: the thread of its latest span.
            let spanThread = thread.probe.threadPerSpan ? thread.tracker.spanThread.load(ordering: .relaxed) : 0
            let tid = spanThread != 0 ? spanThread : thread.armedTID.load(ordering: .acquiring)
            return WatchedLoop(
                kind: thread.loopKind.rawValue, hasRun: thread.hasRun, threadID: tid == 0 ? nil : tid,
                threadName: tid == 0 ? nil : ThreadProcFiles.threadName(tid: tid))
        }
    }

    /// With ``Configuration/blockingCalls``: the C library calls no image loaded at start makes
    /// through its GOT, so none of their uses is seen (often calls no code of the process makes;
    /// in a fully static binary, all). Nil when blocking calls are not watched (not asked for, or
    /// they cannot be watched here: said at start as ``StallMonitorError/Code/blockingCallsUnwatched``).
    public var blockingCallsNotSeen: [String]? { blockingCalls?.unseenCalls }
}
