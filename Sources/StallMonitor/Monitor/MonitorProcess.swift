import Synchronization

/// What the monitors and blocking-call detectors of one process share, because the process has
/// one of each, and nothing else: libdw's symbolication and unwinding sessions (opened by their
/// first user, closed by the last, cached between), the blocking-call recorder (the GOT entries
/// and the C recorder's slots are the process's), and what keeps the files of several monitors
/// of the process apart when they write into one directory: the numbers in their names and the
/// set of files not finished yet. A
/// monitor keeps every other state of its own, from start to stop: a second monitor of the same
/// process writes what the first did (`SecondMonitorTests`).
final class MonitorProcess: Sendable {
    /// The process's.
    static let shared = MonitorProcess()

    /// The running monitors' cache-release gates, opened by a first use of the two below.
    let cacheUse: CacheUse
    /// Names addresses (libdw, `dladdr` and the Swift demangler), for every monitor and detector.
    let symbolicator: Symbolicator
    /// Unwinds blocked threads, snapshots of running ones and blocking calls' stack copies.
    let unwinder: SnapshotUnwinder
    /// Installs the blocking-call wrappers and hands the records to the running detectors.
    let blockingCalls = BlockingCallCollector()
    /// Stall reports named so far (the number in a report's file name).
    let reportsNamed = Atomic<Int>(0)
    /// Session records created so far (the number in a session record's file name, from the
    /// second on).
    let sessionsStarted = Atomic<Int>(0)
    /// The process's `inProgress` reports and running monitors' session records, in every report
    /// directory: no monitor's quota deletes them.
    let unfinishedFiles = UnfinishedFiles()

    private init() {
        let cacheUse = CacheUse()
        self.cacheUse = cacheUse
        symbolicator = Symbolicator(cacheUse: cacheUse)
        unwinder = SnapshotUnwinder(cacheUse: cacheUse)
    }
}
