import CStallMonitor
import Foundation
import Logging

/// Counts problems by kind and says them through the host's logger (info level, as libraries
/// should; warning when the monitor watches nothing), each kind at most once per interval, with
/// how often it repeated since it was last said; the error's path and kind go in metadata. Never
/// throws, never blocks the loop, never writes to stderr itself.
final class ErrorReporter: Sendable {
    private struct State {
        var counts: [String: Int] = [:]
        var last: StallMonitorError?
        /// Per kind: when it was last logged and how often it happened since.
        var logged: [String: (at: UInt64, since: Int)] = [:]
    }

    let logger: Logger
    private let interval: UInt64
    private let state = Locked(State())
    private let clock: @Sendable () -> UInt64

    init(
        logger: Logger, interval: Duration = .seconds(60),
        clock: @escaping @Sendable () -> UInt64 = { CStallMonitor_monotonic_ns() }
    ) {
        self.logger = logger
        self.interval = UInt64(clamping: interval.nanoseconds)
        self.clock = clock
    }

    func report(_ error: StallMonitorError) {
        let now = clock()
        let repeats = state.withLock { state -> Int? in
            state.counts[error.kind, default: 0] += 1
            state.last = error
            if !error.isSaidEachTime, let logged = state.logged[error.kind], now &- logged.at < interval {
                state.logged[error.kind] = (logged.at, logged.since + 1)
                return nil
            }
            let since = state.logged[error.kind]?.since ?? 0
            state.logged[error.kind] = (now, 0)
            return since
        }
        guard let repeats else { return }
        var metadata: Logger.Metadata = ["stallmonitor.problem": "\(error.kind)"]
        if let path = error.path { metadata["path"] = "\(path)" }
        if repeats > 0 { metadata["stallmonitor.repeats"] = "\(repeats)" }
        let again = repeats > 0 ? " (\(repeats) more since the last message)" : ""
        logger.log(level: error.isWarning ? .warning : .info, "StallMonitor: \(error)\(again)", metadata: metadata)
    }

    var counts: [String: Int] { state.withLock { $0.counts } }
    var last: StallMonitorError? { state.withLock { $0.last } }
}
