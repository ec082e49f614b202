import Foundation
import Glibc
import StallReportModel
import Synchronization

/// Keeps the monitor's session record (StallReportKit's `SessionRecord`) next to the reports
/// (`session-<time>-p<pid>.session`, JSON): when monitoring started, its last heartbeat or clean stop, monitored time, spans, stalls and
/// reports dropped and why. `stallreport` uses it for stall rates; the next monitor uses it to tell
/// a dead process's `inProgress` reports from a live one's.
///
/// Between rewrites, ``markAlive()`` overwrites the record's `aliveMs` in place, so a session
/// that dies without `stop()` is dated by its last mark.
final class SessionRecorder: Sendable {
    /// The record's file (its name changes only when the first name was taken by a file not ours).
    var url: URL { URL(fileURLWithPath: store.path(of: fileName.withLock { $0 }), isDirectory: false) }
    private let fileName: Locked<String>
    private let stamp: String
    private let startedAt = Date()
    private let startedMonotonic = DispatchTime.now().uptimeNanoseconds
    private let base: SessionRecord
    private let store: ReportFileStore
    private let errors: ErrorReporter
    private let counters: MonitorCounters
    private let written = Atomic<Bool>(false)
    private let aliveMark = SessionAliveMark()

    /// A record of the monitor whose counts are in `counters` and `errors`, kept in `store`.
    init(
        store: ReportFileStore, process: StallReport.Process, thresholdMs: Double, counters: MonitorCounters,
        errors: ErrorReporter
    ) {
        self.store = store
        self.errors = errors
        self.counters = counters
        let stamp = ReportFileName.stamp(startedAt)
        self.stamp = stamp
        fileName = Locked(Self.name(stamp: stamp))
        base = SessionRecord(
            pid: process.pid, processStartTicks: process.startTicks ?? 0,
            hostName: process.hostName, executableName: process.executableName, appVersion: process.appVersion,
            startedAt: startedAt, lastHeartbeatAt: startedAt, stoppedAt: nil, cleanStop: false, monitoredMs: 0,
            thresholdMs: thresholdMs, spans: 0, stalls: 0, reportsWritten: 0, reportsDropped: [:])
    }

    /// A record's file name. The second and later monitors of one process (which may start in the
    /// same millisecond, e.g. one per thread), and a record whose name was taken, get a number, so
    /// their records never collide.
    private static func name(stamp: String) -> String {
        ReportFileName.session(
            stamp: stamp, pid: getpid(),
            number: MonitorProcess.shared.sessionsStarted.add(1, ordering: .relaxed).newValue)
    }

    /// What the record says of the monitor so far: spans, stalls, reports written and reports
    /// dropped by why (read from the counters the watchdog and the writer keep).
    private func counts() -> (spans: Int, stalls: Int, written: Int, dropped: [String: Int]) {
        let failed: Set<DroppedReportReason> = [.reportWrite, .reportEncoding]
        var dropped = errors.counts.filter { failed.contains(DroppedReportReason(rawValue: $0.key)) }
        func count(_ reason: DroppedReportReason, _ value: Int) {
            if value > 0 { dropped[reason.rawValue] = value }
        }
        count(.rateLimitedToSummary, counters.reportsRateLimited.load(ordering: .relaxed))
        count(.deletedForQuota, counters.reportsDeletedForQuota.load(ordering: .relaxed))
        count(.watchdogStarved, counters.longSpansOverwritten.load(ordering: .relaxed))
        return (
            counters.spansBegun.load(ordering: .relaxed), counters.stallsDetected.load(ordering: .relaxed),
            counters.reportsWritten.load(ordering: .relaxed), dropped
        )
    }

    /// The monotonic time since the start, in nanoseconds.
    private var elapsed: UInt64 { DispatchTime.now().uptimeNanoseconds &- startedMonotonic }

    /// Overwrites the record's `aliveMs` with the time since the start (any thread; a few
    /// microseconds: one small write into the page cache).
    func markAlive() {
        aliveMark.mark(AliveMilliseconds(elapsed / 1_000_000))
    }

    /// Rewrites the record with the current counts (call on the writer queue).
    func heartbeat(stopping: Bool = false) {
        let now = Date()
        let counts = self.counts()
        var record = base
        record.lastHeartbeatAt = now
        let elapsed = elapsed
        // Whole microseconds: written from integers (see SessionRecordJSON's `double`).
        record.monitoredMs = Double(elapsed / 1_000) / 1_000
        record.aliveMs = AliveMilliseconds(elapsed / 1_000_000)
        record.spans = counts.spans
        record.stalls = counts.stalls
        record.reportsWritten = counts.written
        record.reportsDropped = counts.dropped
        if stopping {
            record.stoppedAt = now
            record.cleanStop = true
        }
        do {
            // The bytes JSONEncoder would write, without its code (see SessionRecordJSON).
            let stamp = stamp
            let current = fileName.withLock { $0 }
            let bytes = SessionRecordJSON.encode(record)
            let used = try store.write(
                bytes: bytes, name: current, replacing: written.load(ordering: .relaxed), keepingOpen: !stopping
            ) {
                Self.name(stamp: stamp) as String?
            }
            aliveMark.retarget(descriptor: used.descriptor, offset: SessionRecordJSON.aliveDigitsOffset(in: bytes))
            if used.name != current { fileName.withLock { $0 = used.name } }
            written.store(true, ordering: .relaxed)
            if !stopping {
                // A running monitor's record is unfinished: the quota never deletes it.
                store.setUnfinished(current, false)
                store.setUnfinished(used.name, true)
            }
        } catch {
            errors.report(error)
        }
        // A stopped monitor's record is finished (written or not): the quota may delete it.
        if stopping {
            aliveMark.close()
            store.setUnfinished(fileName.withLock { $0 }, false)
        }
    }
}
