import CStallMonitor

/// Which detector a blocking call belongs to, for detectors that take only their own scope's
/// calls (a test's): a task-local id, inherited by child tasks and unstructured `Task`s, read on
/// the blocking thread by the recorder after the call returned.
enum BlockingCallScope {
    /// The id of the detector whose scope the current task runs in (0: none).
    @TaskLocal static var id: UInt64 = 0

    /// Makes the recorder ask `id` (once per process).
    static let installHook: Void = {
        CStallMonitor_blocking_set_scope_hook { BlockingCallScope.id }
    }()
}
