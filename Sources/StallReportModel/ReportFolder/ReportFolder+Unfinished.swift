import Synchronization

extension ReportFolder {
    /// Names of this process's files that are not finished, in every report directory of every
    /// monitor of the process (several may share a directory): `inProgress` reports and the
    /// session records of monitors that still run. The quota never deletes them.
    package static let unfinished = Mutex<Set<String>>([])

    /// Marks file `name` unfinished (`true`) or finished.
    package static func setUnfinished(_ name: String, _ isUnfinished: Bool) {
        unfinished.withLock { names in
            if isUnfinished { names.insert(name) } else { names.remove(name) }
        }
    }

    /// The names in ``unfinished`` now.
    package static func unfinishedNames() -> Set<String> {
        unfinished.withLock { $0 }
    }
}
