/// Why a monitor could not start, or what went wrong while it ran.
public enum StallMonitorError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The configuration is invalid.
    case invalidConfiguration(String)
    /// No usable real-time signal for sampling (or the requested one is taken).
    case signalUnavailable(String)
    /// The report directory could not be created or is not a directory.
    case reportDirectory(path: String, reason: String)
    /// A report could not be written.
    case reportWrite(path: String, reason: String)
    /// A report could not be encoded.
    case reportEncoding(String)
    /// Preparing the monitored thread for sampling partly failed (it is still watched; samples
    /// may lack stacks).
    case threadArming(String)
    /// The directory quota could not be enforced: the directory could not be listed, or an old
    /// report could not be deleted (it is not tried again).
    case reportQuota(path: String, reason: String)
    /// A ``ResidentLoopThread`` could not be started.
    case threadStart(String)
    /// A watched loop does not run, so nothing of it would be watched: thrown by
    /// ``StallMonitor/start(_:loop:)`` for `.main` in a program whose main thread never runs its
    /// run loop (`async main`, `dispatchMain()`), and said through the logger when a loop has not
    /// run within ``StallMonitor/Configuration/loopSilenceWarning`` of the start.
    case loopNotRunning(String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .invalidConfiguration(let why): return "invalid StallMonitor configuration: \(why)"
        case .signalUnavailable(let why): return "no sampling signal: \(why)"
        case .reportDirectory(let path, let why): return "report directory \(path): \(why)"
        case .reportWrite(let path, let why): return "cannot write stall report \(path): \(why)"
        case .reportEncoding(let why): return "cannot encode stall report: \(why)"
        case .reportQuota(let path, let why): return "report quota, \(path): \(why)"
        case .threadArming(let why): return "preparing the monitored thread: \(why)"
        case .threadStart(let why): return "starting a resident loop thread: \(why)"
        case .loopNotRunning(let why): return why
        }
    }

    /// The file or directory the error is about, when there is one.
    var path: String? {
        switch self {
        case .reportDirectory(let path, _), .reportWrite(let path, _), .reportQuota(let path, _): return path
        default: return nil
        }
    }

    /// Said at warning level (the monitor is not doing its job), not info.
    var isWarning: Bool {
        if case .loopNotRunning = self { return true }
        return false
    }

    /// A stable key for counting errors of one kind.
    var kind: String {
        switch self {
        case .invalidConfiguration: return "invalidConfiguration"
        case .signalUnavailable: return "signalUnavailable"
        case .reportDirectory: return "reportDirectory"
        case .reportWrite: return "reportWrite"
        case .reportEncoding: return "reportEncoding"
        case .reportQuota: return "reportQuota"
        case .threadArming: return "threadArming"
        case .threadStart: return "threadStart"
        case .loopNotRunning: return "loopNotRunning"
        }
    }
}
