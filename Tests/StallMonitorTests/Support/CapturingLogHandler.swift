import Logging
import Synchronization

/// A swift-log handler that keeps every message in memory, so a test can assert what the monitor
/// said and how often. The library never bootstraps logging; the test hands it this logger.
struct CapturingLogHandler: LogHandler {
    /// The messages logged through every copy of the handler.
    final class Store: Sendable {
        private let lines = Mutex<[String]>([])

        /// Everything logged so far, as "<level> <message>".
        var messages: [String] { lines.withLock { $0 } }

        fileprivate func append(_ line: String) {
            lines.withLock { $0.append(line) }
        }
    }

    let store: Store
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        store.append("\(event.level) \(event.message)")
    }

    /// A logger writing into a fresh store; returns both.
    static func logger(label: String = "StallMonitorTests") -> (Logger, Store) {
        let store = Store()
        return (Logger(label: label) { _ in CapturingLogHandler(store: store) }, store)
    }
}
