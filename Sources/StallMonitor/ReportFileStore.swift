import Foundation
import Glibc
import StallReportKit
import Synchronization

/// Writes report files atomically: a temporary file created 0600 with O_EXCL, written, fsynced,
/// then linked to its final name (which fails rather than replace an existing file) or, for a
/// later version of this process's own report, renamed over it; then the directory is fsynced.
/// Names sort by time: `stall-<UTC time>-p<pid>-<n>.json`.
final class ReportFileStore: Sendable {
    let directory: URL
    private let sequence = Atomic<Int>(0)

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
        let number = sequence.add(1, ordering: .relaxed).newValue
        return "stall-\(stamp)-p\(getpid())-\(String(format: "%04d", number)).json"
    }

    /// Writes `data` under `name`; `replacing` a file this process wrote before. Returns the URL.
    func write(_ data: Data, name: String, replacing: Bool = false) throws(StallMonitorError) -> URL {
        let final = directory.appendingPathComponent(name)
        let temporary = directory.appendingPathComponent(".\(name).\(getpid()).tmp")
        var fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0 && errno == ENOENT {
            // The directory was removed while the monitor ran: create it again (0700), once.
            try? Self.prepare(directory)
            fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        }
        guard fd >= 0 else { throw failure(final, "create \(temporary.lastPathComponent)") }
        var closed = false
        defer {
            if !closed { close(fd) }
            unlink(temporary.path)
        }
        let written = data.withUnsafeBytes { bytes -> Bool in
            var offset = 0
            while offset < bytes.count {
                let result = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if result < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += result
            }
            return true
        }
        guard written else { throw failure(final, "write") }
        guard fsync(fd) == 0 else { throw failure(final, "fsync") }
        closed = true
        guard close(fd) == 0 else { throw failure(final, "close") }
        if replacing {
            guard rename(temporary.path, final.path) == 0 else { throw failure(final, "rename over the earlier version") }
        } else {
            guard link(temporary.path, final.path) == 0 else { throw failure(final, "link to final name") }
        }
        let directoryFD = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            fsync(directoryFD)
            close(directoryFD)
        }
        return final
    }

    /// Removes a report this process wrote.
    func remove(name: String) {
        unlink(directory.appendingPathComponent(name).path)
    }

    private func failure(_ url: URL, _ step: String) -> StallMonitorError {
        .reportWrite(path: url.path, reason: "\(step): \(String(cString: strerror(errno)))")
    }
}
