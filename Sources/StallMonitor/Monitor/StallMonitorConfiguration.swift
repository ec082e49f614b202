import CStallMonitor
import Foundation
import Logging
import StallReportModel

extension StallMonitor {
    /// How a monitor detects, samples and reports stalls. Only the report directory is required.
    public struct Configuration: Sendable {
        /// An awake span longer than this is a stall. Default 250 ms (Apple's hang threshold).
        public var threshold: Duration
        /// Where reports are written (created with mode 0700 when missing).
        public var reportDirectory: URL
        /// Time between stack samples while a stall lasts. Default 10 ms.
        public var samplingInterval: Duration
        /// Sampling starts this fraction of the threshold into a span, so the first moments of a
        /// stall are caught; samples of spans that end below the threshold are discarded. Default 0.5.
        public var samplingLead: Double
        /// Upper bound of samples kept per stall; beyond it an evenly spread half is kept and the
        /// interval doubles, so memory stays fixed. Default 200.
        public var maxSamplesPerStall: Int
        /// Deepest stack recorded per sample (at most 512). Default 256.
        public var maxFramesPerSample: Int
        /// How long the watchdog waits for the stuck thread to answer one sample. Default 10 ms.
        public var sampleTimeout: Duration
        /// The signal used for sampling (a real-time signal, or `SIGPROF`); nil picks a free one at
        /// start: `SIGPROF` for ``StallMonitor/Loop/mainActor`` when nothing handles it (libdispatch
        /// leaves it unblocked on its workers), otherwise a real-time signal.
        public var signal: Int32?
        /// How stacks are unwound. Default ``StallMonitor/Unwinding/snapshot``.
        public var unwinding: Unwinding
        /// Bytes of the stuck thread's stack copied per snapshot, from its stack pointer up (never
        /// past the stack's end): deeper stacks are marked truncated. 4 KiB…256 KiB, default 64 KiB
        /// (about 300 frames of typical Swift code).
        public var stackCopyBytes: Int
        /// No longer has any effect: a thread asleep in a syscall is never signalled; its stack is
        /// copied and unwound without touching it, so its syscall is never cut short.
        @available(
            *, deprecated, message: "threads asleep in a syscall are unwound without a signal; nothing is interrupted"
        )
        public var interruptSleepingSyscalls: Bool {
            get { false }
            set {}
        }
        /// How long the loop may be suspended (about to wait, or outside its outermost run) and
        /// still continue the same awake span: a wait that returns at once because work is pending,
        /// or `RunLoop.run()` re-entering the CF loop after each source, is not the loop going idle.
        /// Default 200 µs.
        public var reentryGrace: Duration
        /// The host app's version, copied into every report.
        public var appVersion: String?
        /// Labels copied into every report.
        public var tags: [String: String]
        /// Where the monitor logs (info level or below, context in metadata): each report written,
        /// and problems, each kind at most once per ``logInterval``. The default is a logger labelled
        /// `StallMonitor`, so the app's logging system decides where it goes; the monitor never
        /// writes to stderr itself and never bootstraps logging.
        public var logger: Logger
        /// A problem that repeats is logged at most once per this interval, with the number of
        /// repeats since the last message (all are counted in `statistics.errors`). Default 60 s.
        public var logInterval: Duration
        /// Called on the writer queue after each final report is written, with the report and its file.
        public var onReport: (@Sendable (StallReport, URL) -> Void)?
        /// While a stall lasts, its `inProgress` report is rewritten this often, so evidence is on
        /// disk if the process dies during it. Default 1 s.
        public var inProgressRefresh: Duration
        /// Full reports per fingerprint per ``rateLimitWindow``; later stalls of that fingerprint
        /// get compact reports (no samples), so counts stay exact. Default 10.
        public var maxReportsPerFingerprint: Int
        /// The window of ``maxReportsPerFingerprint``. Default 1 hour.
        public var rateLimitWindow: Duration
        /// Most stall reports kept in the directory; the oldest go first. Session records are held
        /// to this number (and ``maxReportBytes``) on their own, the records of running monitors
        /// and the newest record of each live process always kept. Default 1,000.
        public var maxReportFiles: Int
        /// Most bytes of stall reports kept in the directory; the oldest go first. Default 100 MiB.
        public var maxReportBytes: Int
        /// Report stalls while a debugger (any tracer) is attached. Off by default: breakpoints
        /// and single-stepping are not stalls.
        public var reportWhileDebugged: Bool
        /// Name frames in the host with libdw (loaded at the first stall). Off keeps libdw and its
        /// caches out of the host's memory; reports then carry addresses, images and build IDs,
        /// and `stallreport symbolicate` names them later. Default on.
        public var symbolicateInProcess: Bool
        /// How long after its last use (the last sample unwound, the last report named) libdw's
        /// sessions are released: their DWARF and CFI caches, the debug files they mapped and the
        /// stack-copy buffers. The next stall loads them again (a few ms on its first sample).
        /// Default 30 s; at least 10 ms.
        public var releaseCachesAfter: Duration = .seconds(30)
        /// Whether ``StallMonitor/start(_:loop:)`` (and every other `start`) refuses a report
        /// directory it cannot use: a path that is not a directory, a symbolic link to nothing, a
        /// directory this process may not create files in (permissions, a read-only file system).
        /// It then throws ``StallMonitorError`` with code ``StallMonitorError/Code/reportDirectory``.
        /// Set it to false when the directory may become usable later (a volume mounted after the
        /// app starts, permissions a provisioning step fixes): `start` then succeeds, the problem
        /// is counted in `statistics.errors["reportDirectory"]` and said once through the logger,
        /// and reports are written as soon as the directory can take them. Default true.
        public var requireUsableReportDirectory: Bool = true
        /// How often the session record is rewritten while nothing else happens, in the long run
        /// (a timer of the writer; the watchdog keeps parking while the loop idles). A process that
        /// dies without `stop()` is counted as monitored up to its last heartbeat, so heartbeats
        /// start 1 s apart and space out by a tenth of the time since the start until they are
        /// this far apart: such a process is dated within max(1 s, 10 %) of its life (with the
        /// default, about 50 heartbeats in the first 10 minutes, then one a minute). Default 60 s,
        /// at least 1 s.
        public var sessionHeartbeatInterval: Duration
        /// A watched loop not seen running this long after the start is said through the logger
        /// at warning level (once; ``StallMonitor/watchedLoops`` tells it at any time): nothing
        /// of it is watched. Default 3 s.
        public var loopSilenceWarning: Duration
        /// Called with each monitor started with this configuration, once it watches its loops: how
        /// the test integrations (`StallMonitorTesting`, `StallMonitorXCTest`) learn of monitors
        /// that code under test starts with a stall budget's configuration, to flush and stop them.
        package var onStart: (@Sendable (StallMonitor) -> Void)?
        /// Where the monitor's swift-metrics go (stall durations and counts, dropped reports, loop
        /// utilisation; see the table in the Metrics article). Default: the global `MetricsSystem`
        /// factory, labels prefixed `stallmonitor`. The monitor never bootstraps the metrics system.
        public var metrics: MetricsOptions
        /// Blocking calls on threads that must not block, found and reported beside the stalls
        /// (`blocking-*.json` reports, the `<prefix>.blocking.duration` timer); nil (the default)
        /// watches none. See ``BlockingCallOptions``.
        public var blockingCalls: BlockingCallOptions?

        /// A configuration with the defaults above.
        public init(
            threshold: Duration = .milliseconds(250),
            reportDirectory: URL,
            samplingInterval: Duration = .milliseconds(10),
            samplingLead: Double = 0.5,
            maxSamplesPerStall: Int = 200,
            maxFramesPerSample: Int = 256,
            sampleTimeout: Duration = .milliseconds(10),
            signal: Int32? = nil,
            unwinding: Unwinding = .snapshot,
            stackCopyBytes: Int = 64 * 1024,
            reentryGrace: Duration = .microseconds(200),
            appVersion: String? = nil,
            tags: [String: String] = [:],
            logger: Logger = Logger(label: "StallMonitor"),
            logInterval: Duration = .seconds(60),
            onReport: (@Sendable (StallReport, URL) -> Void)? = nil,
            inProgressRefresh: Duration = .seconds(1),
            maxReportsPerFingerprint: Int = 10,
            rateLimitWindow: Duration = .seconds(3600),
            maxReportFiles: Int = 1_000,
            maxReportBytes: Int = 100 * 1024 * 1024,
            reportWhileDebugged: Bool = false,
            symbolicateInProcess: Bool = true,
            sessionHeartbeatInterval: Duration = .seconds(60),
            loopSilenceWarning: Duration = .seconds(3),
            metrics: MetricsOptions = MetricsOptions()
        ) {
            self.threshold = threshold
            self.reportDirectory = reportDirectory
            self.samplingInterval = samplingInterval
            self.samplingLead = samplingLead
            self.maxSamplesPerStall = maxSamplesPerStall
            self.maxFramesPerSample = maxFramesPerSample
            self.sampleTimeout = sampleTimeout
            self.signal = signal
            self.unwinding = unwinding
            self.stackCopyBytes = stackCopyBytes
            self.reentryGrace = reentryGrace
            self.appVersion = appVersion
            self.tags = tags
            self.logger = logger
            self.logInterval = logInterval
            self.onReport = onReport
            self.inProgressRefresh = inProgressRefresh
            self.maxReportsPerFingerprint = maxReportsPerFingerprint
            self.rateLimitWindow = rateLimitWindow
            self.maxReportFiles = maxReportFiles
            self.maxReportBytes = maxReportBytes
            self.reportWhileDebugged = reportWhileDebugged
            self.symbolicateInProcess = symbolicateInProcess
            self.sessionHeartbeatInterval = sessionHeartbeatInterval
            self.loopSilenceWarning = loopSilenceWarning
            self.metrics = metrics
        }

        /// Throws ``StallMonitorError/Code/invalidConfiguration`` for a setting out of range.
        package func validate() throws(StallMonitorError) {
            if !threshold.isPositive { throw .invalidConfiguration("threshold must be positive") }
            if !samplingInterval.isPositive { throw .invalidConfiguration("samplingInterval must be positive") }
            if !(0.05...1).contains(samplingLead) { throw .invalidConfiguration("samplingLead must be within 0.05…1") }
            if maxSamplesPerStall < 2 { throw .invalidConfiguration("maxSamplesPerStall must be at least 2") }
            if !(1...512).contains(maxFramesPerSample) {
                throw .invalidConfiguration("maxFramesPerSample must be within 1…512")
            }
            if !(4096...Int(CSTALLMONITOR_MAX_STACK_COPY)).contains(stackCopyBytes) {
                throw .invalidConfiguration("stackCopyBytes must be within 4096…\(CSTALLMONITOR_MAX_STACK_COPY)")
            }
            if !sampleTimeout.isPositive { throw .invalidConfiguration("sampleTimeout must be positive") }
            if reentryGrace.attoseconds < 0 { throw .invalidConfiguration("reentryGrace must not be negative") }
            if !inProgressRefresh.isPositive { throw .invalidConfiguration("inProgressRefresh must be positive") }
            if maxReportsPerFingerprint < 1 {
                throw .invalidConfiguration("maxReportsPerFingerprint must be at least 1")
            }
            if !rateLimitWindow.isPositive { throw .invalidConfiguration("rateLimitWindow must be positive") }
            if maxReportFiles < 1 || maxReportBytes < 4096 {
                throw .invalidConfiguration("maxReportFiles must be at least 1 and maxReportBytes at least 4096")
            }
            if sessionHeartbeatInterval.nanoseconds < 1_000_000_000 {
                throw .invalidConfiguration("sessionHeartbeatInterval must be at least 1 s")
            }
            if !logInterval.isPositive { throw .invalidConfiguration("logInterval must be positive") }
            if releaseCachesAfter.nanoseconds < 10_000_000 {
                throw .invalidConfiguration("releaseCachesAfter must be at least 10 ms")
            }
            if !loopSilenceWarning.isPositive { throw .invalidConfiguration("loopSilenceWarning must be positive") }
            if metrics.labelPrefix.isEmpty { throw .invalidConfiguration("metrics.labelPrefix must not be empty") }
            if !reportDirectory.isFileURL { throw .invalidConfiguration("reportDirectory must be a file URL") }
            if let blockingCalls {
                if !blockingCalls.threshold.isPositive {
                    throw .invalidConfiguration("blockingCalls.threshold must be positive")
                }
                if blockingCalls.reportInterval.nanoseconds < 1_000_000_000 {
                    throw .invalidConfiguration("blockingCalls.reportInterval must be at least 1 s")
                }
                if blockingCalls.maxCallSitesPerReport < 1 {
                    throw .invalidConfiguration("blockingCalls.maxCallSitesPerReport must be at least 1")
                }
            }
        }
    }
}

extension StallMonitor {
    /// How the stuck thread's stacks are unwound.
    public enum Unwinding: Sendable, Equatable {
        /// The signal handler only copies the thread's registers and a bounded slice of its stack
        /// (a pause of microseconds, whatever the depth); libdw unwinds the copy on the watchdog.
        /// A thread asleep in a syscall is not signalled at all: its frozen stack is copied and
        /// unwound the same way. Falls back to ``libunwindInHandler`` when libdw cannot be loaded.
        case snapshot
        /// libunwind unwinds a running thread inside its signal handler (the thread pauses for the
        /// whole walk, 100–250 µs); threads asleep in a syscall are still unwound from a copy with
        /// libdw when it loads.
        case libunwindInHandler
    }
}

// Read through `attoseconds`, which the compiler emits into this module: the runtime's own
// `Duration` functions (`components`, `zero`, `<`) share a 64 KiB block of libswiftCore's code
// that starting a monitor in a host that does not use them would otherwise add to its RSS.
extension Duration {
    /// The duration in whole nanoseconds: 0 when negative, at most `Int64.max` (292 years), so
    /// that adding it to a monotonic time or converting it to `Int` cannot overflow.
    var nanoseconds: UInt64 {
        let attoseconds = self.attoseconds
        guard attoseconds > 0 else { return 0 }
        let nanoseconds = attoseconds / 1_000_000_000
        return nanoseconds >= Int128(Int64.max) ? UInt64(Int64.max) : UInt64(nanoseconds)
    }

    /// Whether the duration is longer than zero.
    var isPositive: Bool { attoseconds > 0 }
}
