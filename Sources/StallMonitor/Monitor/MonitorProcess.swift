import Synchronization

/// What the monitors and blocking-call detectors of one process share, because the process has
/// one of each, and nothing else: libdw's symbolication and unwinding sessions (opened by their
/// first user, closed by the last, cached between), the blocking-call recorder (the GOT entries
/// and the C recorder's slots are the process's), and the numbers that keep the names of report
/// and session files apart when several monitors of the process write into one directory. A
/// monitor keeps every other state of its own, from start to stop: a second monitor of the same
/// process writes what the first did (`SecondMonitorTests`).
final class MonitorProcess: Sendable {
    /// The process's.
    static let shared = MonitorProcess()

    /// Names addresses (libdw, `dladdr` and the Swift demangler), for every monitor and detector.
    let symbolicator = Symbolicator()
    /// Unwinds blocked threads, snapshots of running ones and blocking calls' stack copies.
    let unwinder = SnapshotUnwinder()
    /// Installs the blocking-call wrappers and hands the records to the running detectors.
    let blockingCalls = BlockingCallCollector()
    /// Stall reports named so far (the number in a report's file name).
    let reportsNamed = Atomic<Int>(0)
    /// Session records created so far (the number in a session record's file name, from the
    /// second on).
    let sessionsStarted = Atomic<Int>(0)

    private init() {}
}
