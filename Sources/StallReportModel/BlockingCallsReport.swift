import Foundation

/// The blocking calls one monitored process made over one interval, aggregated by call site: a
/// report of its own kind (`blocking-<UTC time>-p<pid>-<n>.json`, JSON Schema
/// `Reports/blocking-calls.schema.json`), written by a monitor that watches blocking calls.
///
/// A call site is one call (`usleep`, `read`, `futex`, …) made from one stack on one kind of loop;
/// its ``CallSite/fingerprint`` is named like a stall's (the top in-app frames, as
/// ``FingerprintName`` gives them), so a debug and a release build agree.
public struct BlockingCallsReport: Codable, Sendable, Equatable {
    /// The schema version this code writes and reads.
    public static let currentSchemaVersion = 1
    /// The value of ``kind``.
    public static let kindValue = "blockingCalls"

    /// Version of this report's contract; `1`.
    public var schemaVersion: Int
    /// Always `blockingCalls`: tells the file from a stall report.
    public var kind: String
    /// Unique id of this report (UUID string).
    public var id: String
    /// Wall-clock time the interval began.
    public var startedAt: Date
    /// Length of the interval in milliseconds.
    public var intervalMs: Double
    /// The shortest call recorded, in milliseconds.
    public var thresholdMs: Double
    /// The process that made the calls.
    public var process: StallReport.Process
    /// Call sites, most blocked time first.
    public var callSites: [CallSite]
    /// Call sites left out of this report (beyond the configured limit; the least blocked time).
    public var omittedCallSites: Int
    /// Calls the recorder could not keep (its slots were full), over the interval.
    public var droppedCalls: Int
    /// Labels given by the host app.
    public var tags: [String: String]?

    /// One call made from one stack on one kind of loop, with every time it blocked.
    public struct CallSite: Codable, Sendable, Equatable {
        /// The C library function: `usleep`, `read`, `pthread_mutex_lock`, `sem_wait`, `futex`, …
        public var call: String
        /// The kind of thread: `concurrencyPool`, `mainActor`, `nioEventLoop`, `runLoop`, or
        /// `markedThread` (a thread the host marked as one that must not block).
        public var loopKind: String
        /// Stable hash of the call's top in-app frames (see ``Fingerprint``) and the call.
        public var fingerprint: String
        /// The innermost frame of the app's own code (not the C library's or the runtime's).
        public var callSite: String?
        /// Calls made.
        public var count: Int
        /// Time they blocked, in milliseconds.
        public var totalMs: Double
        /// The longest, in milliseconds.
        public var maxMs: Double
        /// Each call's duration in milliseconds, oldest first; at most the first 1,000 of the
        /// interval (``count`` counts them all).
        public var durationsMs: [Double]
        /// Kernel thread ids that made the calls (at most 16).
        public var threads: [Int]
        /// The stack of the first call, caller first.
        public var stack: [Frame]
        /// In a Swift task, the first call's async callers: the async functions awaiting the one
        /// that made it, innermost first, ending at the task's root (each a resume function's
        /// entry address); the logical stack is ``stack`` followed by these. Nil outside a task
        /// or when the chain could not be read.
        public var asyncCallers: [Frame]?
        /// True when ``asyncCallers`` were read from the context the job started in (an optimized
        /// build): async functions entered since without suspending may be missing before them.
        public var asyncCallersFromJobStart: Bool?
        /// False when the chain was cut before the task's root (a deep chain read only up to the
        /// reader's cap): ``asyncCallers`` are the innermost callers, and outer ones are missing.
        /// Nil (written only when false) when the callers reach the root.
        public var asyncCallersReachRoot: Bool?

        /// Creates a call site.
        public init(
            call: String, loopKind: String, fingerprint: String, callSite: String?, count: Int, totalMs: Double,
            maxMs: Double,
            durationsMs: [Double], threads: [Int], stack: [Frame], asyncCallers: [Frame]? = nil,
            asyncCallersFromJobStart: Bool? = nil, asyncCallersReachRoot: Bool? = nil
        ) {
            self.call = call
            self.loopKind = loopKind
            self.fingerprint = fingerprint
            self.callSite = callSite
            self.count = count
            self.totalMs = totalMs
            self.maxMs = maxMs
            self.durationsMs = durationsMs
            self.threads = threads
            self.stack = stack
            self.asyncCallers = asyncCallers
            self.asyncCallersFromJobStart = asyncCallersFromJobStart
            self.asyncCallersReachRoot = asyncCallersReachRoot
        }
    }

    /// One frame of a call site's stack.
    public struct Frame: Codable, Sendable, Equatable {
        /// The return address, as `0x…` hex.
        public var address: String
        /// The demangled function name, when known.
        public var symbol: String?
        /// Source file, when the image has line tables.
        public var file: String?
        /// Source line.
        public var line: Int?

        /// Creates a frame.
        public init(address: String, symbol: String?, file: String?, line: Int?) {
            self.address = address
            self.symbol = symbol
            self.file = file
            self.line = line
        }
    }

    /// Creates a report from its parts.
    public init(
        id: String, startedAt: Date, intervalMs: Double, thresholdMs: Double, process: StallReport.Process,
        callSites: [CallSite],
        omittedCallSites: Int, droppedCalls: Int, tags: [String: String]?
    ) {
        self.schemaVersion = Self.currentSchemaVersion
        self.kind = Self.kindValue
        self.id = id
        self.startedAt = startedAt
        self.intervalMs = intervalMs
        self.thresholdMs = thresholdMs
        self.process = process
        self.callSites = callSites
        self.omittedCallSites = omittedCallSites
        self.droppedCalls = droppedCalls
        self.tags = tags
    }

    /// The name of the `number`th blocking-calls report of process `pid`.
    public static func fileName(date: Date, pid: Int32, number: Int) -> String {
        ReportFileName.numbered("blocking", stamp: ReportFileName.stamp(date), pid: pid, number: number)
    }

    /// Whether a file named `name` (a path or a bare name) is a blocking-calls report.
    public static func isFileName(_ name: String) -> Bool {
        let base = name.split(separator: "/").last.map(String.init) ?? name
        return base.hasPrefix("blocking-") && base.hasSuffix(".json")
    }

    /// The fingerprint of a call made from `stack` (caller first, names as symbolicated):
    /// its top in-app names (the runtime's and the C library's left out) and the call.
    public static func fingerprint(call: String, stack: [String?]) -> String {
        let named = stack.compactMap { $0 }.compactMap(FingerprintName.of).filter {
            !isRuntimeName($0) && !Fingerprint.isIgnored($0)
        }
        return Fingerprint.make(
            Array(FingerprintName.collapsed(named).prefix(Fingerprint.appFrameCount)) + ["blocking", call])
    }

    /// Names that are the C library's, the Swift runtime's or Dispatch's and Foundation's, not the app's.
    public static func isRuntimeName(_ name: String) -> Bool {
        runtimePrefixes.contains { name.hasPrefix($0) } || name.contains("CStallMonitor")
    }

    private static let runtimePrefixes = [
        "swift_", "swift::", "_swift_", "__", "pthread_", "sem_", "$s", "dispatch_", "_dispatch",
        // Where every thread begins (glibc's thread entry and the kernel's clone).
        "start_thread", "clone",
        // The Swift overlays' own frames: the app's call into them is the call site.
        "Dispatch.", "Foundation.", "FoundationEssentials.", "Synchronization.", "static Dispatch.",
        "static Foundation.",
    ]
}
