extension StallMonitor {
    /// What the monitor has seen and done so far.
    public struct Statistics: Sendable, Equatable {
        /// Awake spans the loop has had since the monitor started.
        public var spans: Int
        /// Spans that reached the sampling lead and were tracked by the watchdog.
        public var spansTracked: Int
        /// Tracked spans that ended below the threshold (their samples were discarded).
        public var shortSpansDiscarded: Int
        /// Spans longer than the threshold.
        public var stallsDetected: Int
        /// Reports written to disk.
        public var reportsWritten: Int
        /// Stack samples taken.
        public var samplesTaken: Int
        /// Samples whose signal was not answered in time.
        public var samplesTimedOut: Int
        /// Times the watchdog thread woke up.
        public var watchdogWakeups: Int
        /// `inProgress` report versions written while stalls lasted.
        public var inProgressWrites: Int
        /// Stalls not reported because a debugger was attached.
        public var discardedWhileDebugged: Int
        /// Spans not reported because the process was stopped for most of them.
        public var discardedProcessStopped: Int
        /// Spans not reported because they were declared long work or the monitor was paused.
        public var expectedLongWork: Int
        /// Final reports written in compact form because their fingerprint hit its rate limit.
        public var reportsRateLimited: Int
        /// Old reports deleted to stay within the directory quota.
        public var reportsDeletedForQuota: Int
        /// Spans past the sampling lead that ended while the watchdog thread got no CPU, more than
        /// 16 in a row, so the oldest were forgotten before it could check them: possibly stalls,
        /// not reported (the session record counts them as `watchdogStarved`).
        public var longSpansOverwritten: Int
        /// Stacks the watchdog took for samples (copying a blocked thread's stack, or signalling a
        /// running one for a snapshot) and unwound.
        public var watchdogStacks: Int
        /// Time the watchdog spent on those stacks, in nanoseconds: copy or signal round trip, and
        /// unwinding with libdw. Divided by ``watchdogStacks``, the cost of one sample off the
        /// monitored thread.
        public var watchdogStackNanoseconds: Int
        /// Times the Swift concurrency pool started no new job for longer than the threshold
        /// (``StallMonitorError/Code/poolStarved``).
        public var poolStarvations: Int
        /// Errors by kind (e.g. `reportWrite`).
        public var errors: [String: Int]
        /// The most recent error.
        public var lastError: StallMonitorError?
    }

    /// What the monitor has seen and done so far.
    public var statistics: Statistics {
        Statistics(
            spans: threads.reduce(0) { $0 + Int($1.tracker.currentSpan().sequence) },
            spansTracked: counters.spansTracked.load(ordering: .relaxed),
            shortSpansDiscarded: counters.shortSpansDiscarded.load(ordering: .relaxed),
            stallsDetected: counters.stallsDetected.load(ordering: .relaxed),
            reportsWritten: counters.reportsWritten.load(ordering: .relaxed),
            samplesTaken: counters.samplesTaken.load(ordering: .relaxed),
            samplesTimedOut: counters.samplesTimedOut.load(ordering: .relaxed),
            watchdogWakeups: counters.watchdogWakeups.load(ordering: .relaxed),
            inProgressWrites: counters.inProgressWrites.load(ordering: .relaxed),
            discardedWhileDebugged: counters.discardedWhileDebugged.load(ordering: .relaxed),
            discardedProcessStopped: counters.discardedProcessStopped.load(ordering: .relaxed),
            expectedLongWork: counters.expectedLongWork.load(ordering: .relaxed),
            reportsRateLimited: counters.reportsRateLimited.load(ordering: .relaxed),
            reportsDeletedForQuota: counters.reportsDeletedForQuota.load(ordering: .relaxed),
            longSpansOverwritten: counters.longSpansOverwritten.load(ordering: .relaxed),
            watchdogStacks: counters.stacksTaken.load(ordering: .relaxed),
            watchdogStackNanoseconds: counters.stackNanoseconds.load(ordering: .relaxed),
            poolStarvations: counters.poolStarvations.load(ordering: .relaxed),
            errors: errors.counts,
            lastError: errors.last)
    }
}
