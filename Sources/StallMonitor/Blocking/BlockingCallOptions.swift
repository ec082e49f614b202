extension StallMonitor {
    /// Blocking calls a running monitor watches for and reports (see <doc:FindingBlockingCalls>):
    /// calls that put a thread that must not block (a concurrency-pool worker running a job, the
    /// main thread running MainActor work, a watched loop's thread outside its own wait) to sleep
    /// in the kernel for at least ``threshold``. They are aggregated by call site and written
    /// every ``reportInterval`` as a `blocking-*.json` report of their own kind, and counted in
    /// the `<prefix>.blocking.duration` timer as they happen.
    ///
    /// ```swift
    /// var config = StallMonitor.Configuration(reportDirectory: URL(filePath: "stall-reports"))
    /// config.blockingCalls = .init(threshold: .milliseconds(10))
    /// let monitor = try StallMonitor.start(config, loops: [.concurrencyPool])
    /// ```
    public struct BlockingCallOptions: Sendable {
        /// The shortest call recorded. Default 10 ms: about 1 % of one worker's time at one such
        /// call a second, the cost of the record itself (a few µs) far below it.
        public var threshold: Duration
        /// A call whose stack passes through a function whose name contains one of these is not
        /// recorded (work that blocks by design, e.g. a logging handler's `write` to stderr).
        /// Default: ``BlockingCallDetector/Configuration/defaultAllowedFunctions``.
        public var allowedFunctions: [String]
        /// Modules whose own locks may be waited for (see
        /// ``BlockingCallDetector/Configuration/allowedLockOwners``). Default: SwiftNIO's and the
        /// Swift runtime's.
        public var allowedLockOwners: [String]
        /// How often the calls recorded are written as one report, when there were any. Default 60 s.
        public var reportInterval: Duration
        /// Call sites per report at most, the most blocked time first; the others are counted in
        /// the report's `omittedCallSites`. Default 100.
        public var maxCallSitesPerReport: Int

        /// Options with the defaults above.
        public init(
            threshold: Duration = .milliseconds(10),
            allowedFunctions: [String] = BlockingCallDetector.Configuration.defaultAllowedFunctions,
            reportInterval: Duration = .seconds(60), maxCallSitesPerReport: Int = 100,
            allowedLockOwners: [String] = BlockingCallDetector.Configuration.defaultAllowedLockOwners
        ) {
            self.threshold = threshold
            self.allowedFunctions = allowedFunctions
            self.allowedLockOwners = allowedLockOwners
            self.reportInterval = reportInterval
            self.maxCallSitesPerReport = maxCallSitesPerReport
        }
    }
}
