import Logging
import StallMonitor

/// A swift-log handler that keeps every message in memory, so a test can assert what the monitor
/// said and how often. The library never bootstraps logging; the test hands it this logger.
struct CapturingLogHandler: LogHandler {
    /// The messages logged through every copy of the handler.
    final class Store: Sendable {
        /// One message with its level and metadata (the handler's and the call's).
        struct Entry: Sendable {
            var level: Logger.Level
            var message: String
            var metadata: [String: String]
        }

        private let entries = LockedBox<[Entry]>([])

        /// Everything logged so far, as "<level> <message>".
        var messages: [String] { entries.withLock { $0.map { "\($0.level) \($0.message)" } } }
        /// Everything logged so far.
        var all: [Entry] { entries.withLock { $0 } }

        fileprivate func append(_ entry: Entry) {
            entries.withLock { $0.append(entry) }
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
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        store.append(.init(level: event.level, message: "\(event.message)", metadata: merged.mapValues { "\($0)" }))
    }

    /// A logger writing into a fresh store; returns both.
    static func logger(label: String = "StallMonitorTests") -> (Logger, Store) {
        let store = Store()
        return (Logger(label: label) { _ in CapturingLogHandler(store: store) }, store)
    }

    /// Makes `configuration` log into a fresh store, and returns the store.
    static func capture(_ configuration: inout StallMonitor.Configuration) -> Store {
        let (logger, store) = logger()
        configuration.logger = logger
        return store
    }
}
