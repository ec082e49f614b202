import Foundation

extension StallReport {
    /// A starved Swift concurrency pool: no new job started for longer than the threshold because
    /// every worker was held. Present only in such reports (loop kind `concurrencyPool`); each
    /// worker's stack is one of the report's samples.
    public struct Starvation: Codable, Sendable, Equatable {
        /// How long new work waited for a worker, in milliseconds (a block the monitor queued on
        /// the pool, from its enqueue until a worker started it; also the report's `durationMs`).
        public var waitedMs: Double
        /// True when the monitor stopped while new work was still waiting.
        public var ongoing: Bool?
        /// The pool's workers when the starvation was noticed.
        public var workers: [Worker]

        /// One worker of a starved pool.
        public struct Worker: Codable, Sendable, Equatable {
            /// The worker's kernel thread id.
            public var threadID: Int
            /// The worker's name (`oot.default-qos`: libdispatch's root queue).
            public var threadName: String
            /// How long the task it ran had held it when the starvation was noticed, in
            /// milliseconds (to within the poll interval); absent when it ran no task (other
            /// Dispatch work, or between two jobs).
            public var heldMs: Double?
            /// The index in `samples` of the worker's stack, taken when the starvation was noticed.
            public var sample: Int?

            /// Creates a worker's facts.
            public init(threadID: Int, threadName: String, heldMs: Double?, sample: Int?) {
                self.threadID = threadID
                self.threadName = threadName
                self.heldMs = heldMs
                self.sample = sample
            }
        }

        /// Creates starvation facts.
        public init(waitedMs: Double, ongoing: Bool? = nil, workers: [Worker]) {
            self.waitedMs = waitedMs
            self.ongoing = ongoing
            self.workers = workers
        }
    }
}
