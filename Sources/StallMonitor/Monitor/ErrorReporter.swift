import Foundation
import Logging

/// Counts problems by kind and says each kind once: through the host's logger (info level, as
/// libraries should), or on stderr when no logger was given. Never throws, never blocks the loop.
final class ErrorReporter: Sendable {
    private struct State {
        var counts: [String: Int] = [:]
        var last: StallMonitorError?
    }

    private let logger: Logger?
    private let state = Locked(State())

    init(logger: Logger?) {
        self.logger = logger
    }

    func report(_ error: StallMonitorError) {
        let first = state.withLock { state -> Bool in
            state.counts[error.kind, default: 0] += 1
            state.last = error
            return state.counts[error.kind] == 1
        }
        guard first else { return }
        let message = "StallMonitor: \(error) (further errors of this kind are counted, not logged)"
        if let logger {
            logger.info("\(message)")
        } else {
            FileHandle.standardError.write(Data((message + "\n").utf8))
        }
    }

    var counts: [String: Int] { state.withLock { $0.counts } }
    var last: StallMonitorError? { state.withLock { $0.last } }
}
