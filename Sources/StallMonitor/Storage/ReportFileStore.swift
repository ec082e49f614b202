import Foundation
import Glibc
import StallReportModel
import Synchronization

/// The monitor's side of its ``ReportFolder``: names new reports (``MonitorProcess/reportsNamed``), says a
/// failure as a ``StallMonitorError``, and keeps the quota's index and the process's unfinished set
/// up to date with every write and removal, so that the writer makes one call per file.
final class ReportFileStore: Sendable {
    /// The report directory, which owns names, listing, liveness and atomic writes.
    let folder: ReportFolder
    /// The quota told of each write and removal (nil: none, as in tests of the store alone).
    let quota: ReportQuota?
    /// The process's unfinished files, which the quota never deletes.
    private let unfinished: UnfinishedFiles

    /// A store for `directory`, telling `quota` (when given) of what it writes and removes, and
    /// keeping `unfinished` (the process's: ``MonitorProcess``) up to date.
    init(
        directory: URL, quota: ReportQuota? = nil, unfinished: UnfinishedFiles
    ) {
        self.folder = ReportFolder(directory)
        self.quota = quota
        self.unfinished = unfinished
    }

    /// Marks file `name` unfinished (the quota never deletes it) or finished.
    func setUnfinished(_ name: String, _ isUnfinished: Bool) {
        unfinished.set(name, isUnfinished)
    }

    /// The report directory.
    var directory: URL { folder.url }

    /// Creates the directory (and missing parents) with mode 0700 (``ReportFolder/prepare()``).
    static func prepare(_ directory: URL) throws(StallMonitorError) {
        do {
            try ReportFolder(directory).prepare()
        } catch {
            throw .reportDirectory(path: directory.path, reason: error.reason)
        }
    }

    /// Creates the directory when missing, then checks that this process can create files in it
    /// (``ReportFolder/prepareUsable()``).
    static func prepareUsable(_ directory: URL) throws(StallMonitorError) {
        do {
            try ReportFolder(directory).prepareUsable()
        } catch {
            throw .reportDirectory(path: directory.path, reason: error.reason)
        }
    }

    /// The file name for a report started at `date`.
    func fileName(startedAt date: Date) -> String {
        ReportFileName.report(
            stamp: ReportFileName.stamp(date), pid: getpid(),
            number: MonitorProcess.shared.reportsNamed.add(1, ordering: .relaxed).newValue)
    }

    /// How many other names a new file tries when its name is taken by a file that is not ours.
    static var nameAttempts: Int { ReportFolder.nameAttempts }

    /// Writes one version of a report: a new file (`replacing` false; a name taken by a file not
    /// ours makes it take a name from `nextName`) or over this process's earlier version. The
    /// quota learns its size; an `inProgress` version is marked unfinished, a final one finished.
    /// Returns the path and the name used.
    @discardableResult
    func write(
        _ data: Data, name: String, replacing: Bool, unfinished: Bool = false,
        nextName: () -> String? = { nil }
    ) throws(StallMonitorError) -> (path: String, name: String) {
        let written: (path: String, name: String)
        do {
            written = try folder.write(data, name: name, replacing: replacing, nextName: nextName)
        } catch {
            throw .reportWrite(path: error.path, reason: error.reason)
        }
        quota?.noteWritten(written.name, bytes: data.count)
        self.unfinished.set(written.name, unfinished)
        return written
    }

    /// Writes `data` as a new file named `name`, or under the next of up to ``nameAttempts`` names
    /// from `nextName` when that name is taken by a file that is not ours. Returns the path and
    /// the name used.
    func writeNew(
        _ data: Data, name: String, nextName: () -> String
    ) throws(StallMonitorError) -> (path: String, name: String) {
        try write(data, name: name, replacing: false, nextName: { nextName() })
    }

    /// Writes `bytes` under `name` (the session record: no `Data` on an idle monitor's path), as
    /// ``write(_:name:replacing:unfinished:nextName:)`` writes `Data`; not counted by the quota's
    /// report index (it lists session records itself).
    @discardableResult
    func write(
        bytes: [UInt8], name: String, replacing: Bool, keepingOpen: Bool = false,
        nextName: () -> String? = { nil }
    ) throws(StallMonitorError) -> (path: String, name: String, descriptor: Int32?) {
        do {
            return try folder.write(
                bytes: bytes, name: name, replacing: replacing, keepingOpen: keepingOpen, nextName: nextName)
        } catch {
            throw .reportWrite(path: error.path, reason: error.reason)
        }
    }

    /// Brings the directory within its quota (``ReportQuota/enforce(keeping:protected:now:)``),
    /// never deleting `keeping` nor a file of this process's unfinished set.
    func enforceQuota(keeping: String = "") {
        quota?.enforce(keeping: keeping, protected: unfinished.current())
    }

    /// Removes a report this process wrote; the quota and the unfinished set forget it.
    func remove(name: String) {
        folder.remove(name)
        quota?.noteRemoved(name)
        unfinished.set(name, false)
    }

    /// The path of file `name` in the directory.
    func path(of name: String) -> String {
        folder.path(of: name)
    }
}
