import Foundation
import Glibc
import StallReportModel
import Synchronization

/// Writes report files atomically with ``AtomicFileWriter`` (mode 0600): a new report is linked
/// into place, which fails rather than replace another file; a later version of this process's
/// own report is renamed over it. Names sort by time: `stall-<UTC time>-p<pid>-<n>.json`.
final class ReportFileStore: Sendable {
    let directory: URL
    /// Process-wide, not per store: several monitors of one process may write into one directory
    /// in the same millisecond, and their names must still differ.
    private static let sequence = Atomic<Int>(0)

    init(directory: URL) {
        self.directory = directory
    }

    /// Creates the directory (and missing parents) with mode 0700.
    static func prepare(_ directory: URL) throws(StallMonitorError) {
        let path = directory.path
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw .reportDirectory(path: path, reason: "exists and is not a directory") }
            return
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .reportDirectory(path: path, reason: (error as NSError).localizedDescription)
        }
    }

    /// The file name for a report started at `date`.
    func fileName(startedAt date: Date) -> String {
        let stamp = ReportCoding.formatDate(date)
            .replacingOccurrences(of: "-", with: "")
            .replacingOccurrences(of: ":", with: "")
        let number = Self.sequence.add(1, ordering: .relaxed).newValue
        return "stall-\(stamp)-p\(getpid())-\(String(format: "%04d", number)).json"
    }

    /// Writes `data` under `name`; `replacing` a file this process wrote before. Returns the URL.
    func write(_ data: Data, name: String, replacing: Bool = false) throws(StallMonitorError) -> URL {
        let final = directory.appendingPathComponent(name)
        let existing: AtomicFileWriter.Existing = replacing ? .replace : .fail
        do {
            try AtomicFileWriter.write(data, to: final.path, mode: 0o600, existing: existing)
        } catch let error where error.code == ENOENT {
            // The directory was removed while the monitor ran: create it again (0700), once.
            try? Self.prepare(directory)
            do {
                try AtomicFileWriter.write(data, to: final.path, mode: 0o600, existing: existing)
            } catch {
                throw .reportWrite(path: final.path, reason: error.description)
            }
        } catch {
            throw .reportWrite(path: final.path, reason: error.description)
        }
        return final
    }

    /// Removes a report this process wrote.
    func remove(name: String) {
        unlink(directory.appendingPathComponent(name).path)
    }
}
