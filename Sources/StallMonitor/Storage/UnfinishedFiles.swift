import Foundation

/// Names of this process's report-directory files that are not finished, in every report
/// directory of every monitor of the process (several may share a directory): `inProgress`
/// reports and the session records of monitors that still run. The quota never deletes them.
/// One per process (``MonitorProcess/unfinishedFiles``), handed to each monitor's store.
///
/// Behind a lock ThreadSanitizer can see: `NSLock` is a pthread mutex, whose calls TSan
/// intercepts (the standard library's `Mutex` locks with futex calls it cannot see, so TSan
/// would report the set as raced between two writer threads).
final class UnfinishedFiles: @unchecked Sendable {
    private let lock = NSLock()
    private var names: Set<String> = []

    /// Marks file `name` unfinished (`true`) or finished.
    func set(_ name: String, _ isUnfinished: Bool) {
        lock.lock()
        defer { lock.unlock() }
        if isUnfinished { names.insert(name) } else { names.remove(name) }
    }

    /// The names marked unfinished now.
    func current() -> Set<String> {
        lock.lock()
        defer { lock.unlock() }
        return names
    }
}
