import CStallMonitor
import Foundation
import Glibc
import StallReportModel

/// Keeps the report directory within a number of files and bytes by deleting the oldest stall
/// reports (names sort by time; blocking-calls reports, `blocking-*`, sort before them and go first) first, in a directory other processes may share.
///
/// It keeps an index of the directory's reports (name → size): this monitor's own writes and
/// removals update it as they happen; the directory is listed (and each report's size read) only
/// at the first enforcement and then at most once per ``rescanInterval``, to learn other
/// processes' files. A report is deleted only if this process wrote it and is done with it, or
/// the process named in its file name (`-p<pid>-`) no longer runs (a reused pid counts as
/// running: such a file is kept, never wrongly deleted). What is deleted is counted; a listing or
/// an unlink that fails is reported once per file as a `reportQuota` error, never retried in a
/// loop. Used only on the writer queue.
final class ReportQuota: Sendable {
    /// How often at most the directory is listed again to learn about other processes' reports.
    static let rescanInterval: UInt64 = 60_000_000_000

    private struct State {
        var sizes: [String: Int] = [:]
        var total = 0
        /// Session records (`session-*.session`) and their sizes, as of the last listing.
        var sessionSizes: [String: Int] = [:]
        var lastScan: UInt64?
        /// Files whose deletion failed: not tried again.
        var undeletable: Set<String> = []
    }

    /// The report directory.
    let folder: ReportFolder
    let maxFiles: Int
    let maxBytes: Int
    private let counters: MonitorCounters
    private let errors: ErrorReporter
    private let state = Locked(State())
    private let ownPID = Int(getpid())

    /// A quota of `maxFiles` files and `maxBytes` bytes (each for reports and, on their own, for
    /// session records) over `folder`.
    init(folder: ReportFolder, maxFiles: Int, maxBytes: Int, counters: MonitorCounters, errors: ErrorReporter) {
        self.folder = folder
        self.maxFiles = maxFiles
        self.maxBytes = maxBytes
        self.counters = counters
        self.errors = errors
    }

    /// Records that this process wrote (or rewrote) report `name` with `bytes` bytes.
    func noteWritten(_ name: String, bytes: Int) {
        state.withLock { state in
            state.total += bytes - (state.sizes[name] ?? 0)
            state.sizes[name] = bytes
        }
    }

    /// Records that this process removed report `name`.
    func noteRemoved(_ name: String) {
        state.withLock { state in
            if let size = state.sizes.removeValue(forKey: name) { state.total -= size }
        }
    }

    /// Deletes the oldest deletable reports until the directory is within quota. Never deletes
    /// `keeping` or any of `protected` (this process's reports still being written).
    /// Session records are kept within the same limits, counted on their own (reports never make
    /// room for them): the oldest go first, never one of `protected` (this process's monitors that
    /// still run) nor the newest record of another process that still runs.
    func enforce(keeping: String, protected: Set<String> = [], now: UInt64 = CStallMonitor_monotonic_ns()) {
        var current = state.withLock { $0 }
        if current.lastScan.map({ now &- $0 >= Self.rescanInterval }) ?? true {
            guard let scanned = scan() else { return }
            current.sizes = scanned.reports
            current.total = scanned.reports.values.reduce(0, +)
            current.sessionSizes = scanned.sessions
            current.lastScan = now
        }
        enforceSessions(&current, protected: protected)
        guard current.sizes.count > maxFiles || current.total > maxBytes else {
            state.withLock { $0 = current }
            return
        }
        var running: [Int: Bool] = [:]
        for name in current.sizes.keys.sorted() {
            guard current.sizes.count > maxFiles || current.total > maxBytes else { break }
            guard name != keeping, !protected.contains(name), !current.undeletable.contains(name) else { continue }
            if let pid = ReportFileName.reportWriterPID(name), mayRun(pid, &running) { continue }
            let size = current.sizes[name] ?? 0
            switch folder.remove(name) {
            case .removed:
                counters.reportsDeletedForQuota.add(1, ordering: .relaxed)
            case .alreadyGone:
                break  // someone else deleted it first
            case .failed(let code):
                current.undeletable.insert(name)
                errors.report(
                    .reportQuota(path: folder.path(of: name), reason: "cannot delete: \(CString.errorMessage(code))"))
                continue
            }
            current.sizes.removeValue(forKey: name)
            current.total -= size
        }
        state.withLock { $0 = current }
    }

    /// Deletes the oldest session records until their number and bytes are within the limits.
    private func enforceSessions(_ current: inout State, protected: Set<String>) {
        var total = current.sessionSizes.values.reduce(0, +)
        guard current.sessionSizes.count > maxFiles || total > maxBytes else { return }
        let names = current.sessionSizes.keys.sorted()  // by time: the stamp follows the prefix
        var newest: [Int: String] = [:]
        for name in names { if let pid = ReportFileName.sessionWriterPID(name) { newest[pid] = name } }
        var running: [Int: Bool] = [:]
        for name in names {
            guard current.sessionSizes.count > maxFiles || total > maxBytes else { break }
            guard !protected.contains(name), !current.undeletable.contains(name) else { continue }
            if let pid = ReportFileName.sessionWriterPID(name), newest[pid] == name, mayRun(pid, &running) {
                continue  // the record a live process is still writing
            }
            if case .failed(let code) = folder.remove(name) {
                current.undeletable.insert(name)
                errors.report(
                    .reportQuota(path: folder.path(of: name), reason: "cannot delete: \(CString.errorMessage(code))"))
                continue
            }
            total -= current.sessionSizes.removeValue(forKey: name) ?? 0
        }
    }

    /// Whether a file of `pid` must be kept because its writer may still run
    /// (``WriterLiveness/mayRun(pid:)``), asked once per pid per enforcement (`known` holds the
    /// answers so far). Never for this process's files: which of those are unfinished the
    /// `protected` set says.
    private func mayRun(_ pid: Int, _ known: inout [Int: Bool]) -> Bool {
        guard pid != ownPID else { return false }
        if let alive = known[pid] { return alive }
        let alive = WriterLiveness.mayRun(pid: pid)
        known[pid] = alive
        return alive
    }

    /// The directory's reports and session records and their sizes (regular files only); nil
    /// (reported) when it cannot be listed.
    private func scan() -> (reports: [String: Int], sessions: [String: Int])? {
        guard
            let files = folder.regularFiles(where: {
                ReportFileName.isReport($0) || BlockingCallsReport.isFileName($0) || ReportFileName.isSession($0)
            })
        else {
            errors.report(.reportQuota(path: folder.path, reason: "cannot list: \(CString.errorMessage(errno))"))
            return nil
        }
        var sizes: [String: Int] = [:]
        var sessions: [String: Int] = [:]
        for (name, size) in files {
            if ReportFileName.isSession(name) { sessions[name] = size } else { sizes[name] = size }
        }
        return (sizes, sessions)
    }
}
