/// Why a monitor could not start, or what went wrong while it ran.
///
/// A struct with a ``Code`` rather than an enum, so that a new kind of error is not a breaking
/// change: compare ``code`` with the known codes (`error.code == .reportWrite`) and keep a default
/// for codes added later. The static functions of the same names build errors of each code. (The
/// swift-service-lifecycle `ServiceGroupError` pattern: ``Code`` wraps a private enum and offers
/// the known codes as static members.)
public struct StallMonitorError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of error this is. New codes may be added in any release.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// A stable name of the code, e.g. `reportWrite` (also the key of
        /// ``StallMonitor/Statistics/errors`` and the `stallmonitor.problem` log metadata).
        public var name: String { kind.rawValue }

        /// The known codes (private: new ones may be added without breaking a switch).
        fileprivate enum Kind: String, Sendable {
            case invalidConfiguration
            case signalUnavailable
            case reportDirectory
            case reportWrite
            case reportEncoding
            case threadArming
            case reportQuota
            case threadStart
            case loopNotRunning
            case unsupportedLoop
            case poolStarved
            case signalTakenOver
            case threadExited
            case blockingCallsUnwatched
            case syscallDenied
        }

        /// Which known code this is.
        fileprivate let kind: Kind

        private init(_ kind: Kind) { self.kind = kind }

        /// The configuration is invalid.
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// No usable real-time signal for sampling (or the requested one is taken).
        public static let signalUnavailable = Code(.signalUnavailable)
        /// The report directory could not be created, is not a directory (or a symbolic link to
        /// nothing), or this process cannot create files in it (see
        /// ``StallMonitor/Configuration/requireUsableReportDirectory``).
        public static let reportDirectory = Code(.reportDirectory)
        /// A report could not be written.
        public static let reportWrite = Code(.reportWrite)
        /// A report could not be encoded.
        public static let reportEncoding = Code(.reportEncoding)
        /// Preparing the monitored thread for sampling partly failed (it is still watched;
        /// samples may lack stacks).
        public static let threadArming = Code(.threadArming)
        /// The directory quota could not be enforced: the directory could not be listed, or an
        /// old report could not be deleted (it is not tried again).
        public static let reportQuota = Code(.reportQuota)
        /// A ``ResidentLoopThread`` could not be started.
        public static let threadStart = Code(.threadStart)
        /// A watched loop does not run, so nothing of it would be watched: thrown by
        /// ``StallMonitor/start(_:loop:)`` for `.main` in a program whose main thread never runs
        /// its run loop (`async main`, `dispatchMain()`), and said through the logger when a loop
        /// has not run within ``StallMonitor/Configuration/loopSilenceWarning`` of the start.
        public static let loopNotRunning = Code(.loopNotRunning)
        /// The loop asked for cannot be watched with this toolchain or in this program: thrown by
        /// ``StallMonitor/start(_:loop:)`` for `.mainActor` when libdispatch's main queue cannot be
        /// read as expected (another compiler version, an unknown layout) or the program drains the
        /// main queue on its main thread (watch `RunLoop.main` there).
        public static let unsupportedLoop = Code(.unsupportedLoop)
        /// The Swift concurrency pool started no new job for longer than the threshold: every
        /// worker was held (``StallMonitor/Loop/concurrencyPool``). Said through the logger at
        /// warning level with each worker and how long its job had held it; each held job longer
        /// than the threshold also has a stall report of its own.
        public static let poolStarved = Code(.poolStarved)
        /// The sampling signal no longer runs the monitor's handler: the host replaced it, or set
        /// `SIG_DFL` or `SIG_IGN`, after start. Running threads are not signalled (they get no
        /// stack) until the handler is back; threads asleep in a syscall still get theirs.
        public static let signalTakenOver = Code(.signalTakenOver)
        /// A watched thread exited (`pthread_exit`) while its loop was awake: the span ends where
        /// the thread was last seen alive, and the monitor stops watching that thread.
        public static let threadExited = Code(.threadExited)
        /// Blocking calls were asked for (``StallMonitor/Configuration/blockingCalls``) but some or
        /// all cannot be seen in this process (a fully static binary, a ThreadSanitizer build,
        /// calls the executable makes without its GOT): said at start, at warning level. Stalls are
        /// watched as usual.
        public static let blockingCallsUnwatched = Code(.blockingCallsUnwatched)
        /// A system call the monitor uses was refused (`EPERM`, `ENOSYS`: a container's seccomp
        /// profile, a sandbox): said once per call at info level, naming the call, the errno and
        /// what the monitor does instead (reads its own memory through `/proc/self/mem` when
        /// `process_vm_readv` is denied) or what is lost (running threads get no stack when
        /// `tgkill` is denied). See "In containers" in the production guide.
        public static let syscallDenied = Code(.syscallDenied)

        /// The code's name.
        public var description: String { name }
    }

    /// What kind of error this is.
    public let code: Code
    /// Why, in words (without the path, which is ``path``).
    public let reason: String
    /// The file or directory the error is about, when there is one.
    public let path: String?

    /// Creates an error of a code; prefer the static functions named after the codes.
    public init(code: Code, reason: String, path: String? = nil) {
        self.code = code
        self.reason = reason
        self.path = path
    }

    /// The configuration is invalid.
    public static func invalidConfiguration(_ why: String) -> Self { Self(code: .invalidConfiguration, reason: why) }
    /// No usable real-time signal for sampling (or the requested one is taken).
    public static func signalUnavailable(_ why: String) -> Self { Self(code: .signalUnavailable, reason: why) }
    /// The report directory could not be created or is not a directory.
    public static func reportDirectory(path: String, reason: String) -> Self {
        Self(code: .reportDirectory, reason: reason, path: path)
    }
    /// A report could not be written.
    public static func reportWrite(path: String, reason: String) -> Self {
        Self(code: .reportWrite, reason: reason, path: path)
    }
    /// A report could not be encoded.
    public static func reportEncoding(_ why: String) -> Self { Self(code: .reportEncoding, reason: why) }
    /// Preparing the monitored thread for sampling partly failed.
    public static func threadArming(_ why: String) -> Self { Self(code: .threadArming, reason: why) }
    /// The directory quota could not be enforced.
    public static func reportQuota(path: String, reason: String) -> Self {
        Self(code: .reportQuota, reason: reason, path: path)
    }
    /// A ``ResidentLoopThread`` could not be started.
    public static func threadStart(_ why: String) -> Self { Self(code: .threadStart, reason: why) }
    /// A watched loop does not run (see ``Code/loopNotRunning``).
    public static func loopNotRunning(_ why: String) -> Self { Self(code: .loopNotRunning, reason: why) }
    /// The concurrency pool is starved (see ``Code/poolStarved``).
    public static func poolStarved(_ what: String) -> Self { Self(code: .poolStarved, reason: what) }
    /// The loop cannot be watched with this toolchain or in this program (see ``Code/unsupportedLoop``).
    public static func unsupportedLoop(_ why: String) -> Self { Self(code: .unsupportedLoop, reason: why) }
    /// The sampling signal's handler was replaced by the host (see ``Code/signalTakenOver``).
    public static func signalTakenOver(_ why: String) -> Self { Self(code: .signalTakenOver, reason: why) }
    /// A watched thread exited during a span (see ``Code/threadExited``).
    public static func threadExited(_ what: String) -> Self { Self(code: .threadExited, reason: what) }
    /// Blocking calls, or some of them, are not seen (see ``Code/blockingCallsUnwatched``).
    public static func blockingCallsUnwatched(_ why: String) -> Self {
        Self(code: .blockingCallsUnwatched, reason: why)
    }
    /// A system call the monitor uses was refused (see ``Code/syscallDenied``).
    public static func syscallDenied(_ what: String) -> Self { Self(code: .syscallDenied, reason: what) }

    /// A one-line explanation.
    public var description: String {
        switch code.kind {
        case .invalidConfiguration: return "invalid StallMonitor configuration: \(reason)"
        case .signalUnavailable: return "no sampling signal: \(reason)"
        case .reportDirectory: return "report directory \(path ?? "?"): \(reason)"
        case .reportWrite: return "cannot write stall report \(path ?? "?"): \(reason)"
        case .reportEncoding: return "cannot encode stall report: \(reason)"
        case .reportQuota: return "report quota, \(path ?? "?"): \(reason)"
        case .threadArming: return "preparing the monitored thread: \(reason)"
        case .threadStart: return "starting a resident loop thread: \(reason)"
        case .loopNotRunning: return reason
        case .unsupportedLoop: return "cannot watch this loop: \(reason)"
        case .poolStarved: return "concurrency pool starved: \(reason)"
        case .signalTakenOver: return "sampling signal taken over: \(reason)"
        case .threadExited: return "watched thread exited: \(reason)"
        case .blockingCallsUnwatched: return "blocking calls not watched: \(reason)"
        case .syscallDenied: return "system call refused: \(reason)"
        }
    }

    /// Said at warning level (the monitor is not doing its job), not info.
    var isWarning: Bool {
        code == .loopNotRunning || code == .poolStarved || code == .blockingCallsUnwatched
    }

    /// Said every time it happens rather than at most once per log interval: errors whose every
    /// occurrence is a distinct cause, said once each by their source.
    var isSaidEachTime: Bool { code == .syscallDenied }

    /// A stable key for counting errors of one kind.
    var kind: String { code.name }
}
