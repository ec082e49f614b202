import Foundation

extension ReportFolder {
    /// Names of this process's files that are not finished, in every report directory of every
    /// monitor of the process (several may share a directory): `inProgress` reports and the
    /// session records of monitors that still run. The quota never deletes them.
    private static let unfinished = UnfinishedNames()

    /// Marks file `name` unfinished (`true`) or finished.
    package static func setUnfinished(_ name: String, _ isUnfinished: Bool) {
        unfinished.set(name, isUnfinished)
    }

    /// The names marked unfinished now.
    package static func unfinishedNames() -> Set<String> {
        unfinished.names()
    }
}

/// A set of file names behind a lock ThreadSanitizer can see: `NSLock` is a pthread mutex, whose
/// calls TSan intercepts (the standard library's `Mutex` locks with futex calls it cannot see, so
/// TSan would report the set as raced between two writer threads).
private final class UnfinishedNames: @unchecked Sendable {
    private let lock = NSLock()
    private var set: Set<String> = []

    func set(_ name: String, _ isUnfinished: Bool) {
        lock.lock()
        defer { lock.unlock() }
        if isUnfinished { set.insert(name) } else { set.remove(name) }
    }

    func names() -> Set<String> {
        lock.lock()
        defer { lock.unlock() }
        return set
    }
}
