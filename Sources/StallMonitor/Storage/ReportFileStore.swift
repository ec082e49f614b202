import Foundation
import Glibc
import StallReportModel
import Synchronization

/// Writes report files atomically with ``AtomicFileWriter`` (mode 0600): a new report is linked
/// into place, which fails rather than replace another file; a later version of this process's
/// own report is renamed over it. Names sort by time: `stall-<UTC time>-p<pid>-<n>.json`.
final class ReportFileStore: Sendable {
    let directory: URL
    /// `directory`'s path, read once: paths of files are built from it as strings (URL
    /// operations are code an idle monitor would otherwise touch for its session record).
    let directoryPath: String
    /// Process-wide, not per store: several monitors of one process may write into one directory
    /// in the same millisecond, and their names must still differ.
    static let sequence = Atomic<Int>(0)

    init(directory: URL) {
        self.directory = directory
        self.directoryPath = directory.path
    }

    /// Creates the directory (and missing parents) with mode 0700. With the C library's
    /// `stat`/`mkdir`: Foundation's `FileManager` paths were a good part of the code pages an
    /// idle monitor touched.
    static func prepare(_ directory: URL) throws(StallMonitorError) {
        let path = directory.path
        var status = stat()
        if stat(path, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFDIR else { throw .reportDirectory(path: path, reason: "exists and is not a directory") }
            return
        }
        // Each missing component from the top, as `mkdir -p -m 0700` does.
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += prefix.isEmpty || prefix.hasSuffix("/") ? String(component) : "/" + component
            if stat(prefix, &status) == 0 {
                guard status.st_mode & S_IFMT == S_IFDIR else {
                    throw .reportDirectory(path: path, reason: "\(prefix) exists and is not a directory")
                }
                continue
            }
            if mkdir(prefix, 0o700) == 0 {
                chmod(prefix, 0o700)  // whatever the umask
                continue
            }
            let code = errno
            // Created by another process meanwhile: fine.
            guard code == EEXIST else {
                throw .reportDirectory(path: path, reason: "cannot create \(prefix): \(String(cString: strerror(code)))")
            }
        }
    }

    /// Creates the directory when missing (see ``prepare(_:)``), then checks that this process can
    /// create files in it: it is a directory (not a symbolic link to nothing, not a file), and
    /// writable and searchable with the process's effective ids on a writable file system.
    static func prepareUsable(_ directory: URL) throws(StallMonitorError) {
        try prepare(directory)
        let path = directory.path
        var status = stat()
        guard stat(path, &status) == 0 else {
            let code = errno
            if lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFLNK {
                throw .reportDirectory(path: path, reason: "is a symbolic link to \(linkTarget(path) ?? "?"), which cannot be used: \(CString.errorMessage(code))")
            }
            throw .reportDirectory(path: path, reason: CString.errorMessage(code))
        }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw .reportDirectory(path: path, reason: "is not a directory") }
        guard faccessat(AT_FDCWD, path, W_OK | X_OK, AT_EACCESS) == 0 else {
            let code = errno
            throw .reportDirectory(path: path, reason: "this process (uid \(geteuid())) cannot create files in it: \(CString.errorMessage(code))")
        }
    }

    private static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The file name for a report started at `date`.
    func fileName(startedAt date: Date) -> String {
        // Without Foundation's replacingOccurrences and String(format:) (NSString code).
        let stamp = String(ReportCoding.formatDate(date).filter { $0 != "-" && $0 != ":" })
        let number = String(Self.sequence.add(1, ordering: .relaxed).newValue)
        let padded = String(repeating: "0", count: max(0, 4 - number.count)) + number
        return "stall-\(stamp)-p\(getpid())-\(padded).json"
    }

    /// How many other names a new file tries when its name is taken by a file that is not ours
    /// (another process's, or a link someone planted at a name they could predict).
    static let nameAttempts = 16

    /// Writes `data` under `name`; `replacing` a file this process wrote before. Returns its path.
    @discardableResult
    func write(_ data: Data, name: String, replacing: Bool = false) throws(StallMonitorError) -> String {
        try write(name: name, replacing: replacing, nextName: { nil }) { path, existing throws(AtomicFileWriter.Failure) in
            try AtomicFileWriter.write(data, to: path, mode: 0o600, existing: existing)
        }.path
    }

    /// Writes `data` as a new file named `name`, or, when that name is taken by a file that is not
    /// ours (`link` says EEXIST; nothing is ever written through it), under the next of up to
    /// ``nameAttempts`` names from `nextName`. Returns the path and the name used.
    func writeNew(_ data: Data, name: String, nextName: () -> String) throws(StallMonitorError) -> (path: String, name: String) {
        try write(name: name, replacing: false, nextName: nextName) { path, existing throws(AtomicFileWriter.Failure) in
            try AtomicFileWriter.write(data, to: path, mode: 0o600, existing: existing)
        }
    }

    /// Writes `bytes` under `name`, as ``write(_:name:replacing:)`` writes `Data` (the session
    /// record: no `Data` on an idle monitor's path); a new file (`replacing` false) whose name is
    /// taken goes under a name from `nextName`, as in ``writeNew(_:name:nextName:)``. Returns the
    /// path and the name used.
    @discardableResult
    func write(bytes: [UInt8], name: String, replacing: Bool = false,
               nextName: (() -> String)? = nil) throws(StallMonitorError) -> (path: String, name: String) {
        try write(name: name, replacing: replacing, nextName: { nextName?() }) { path, existing throws(AtomicFileWriter.Failure) in
            try AtomicFileWriter.write(bytes: bytes, to: path, mode: 0o600, existing: existing)
        }
    }

    private func write(name: String, replacing: Bool, nextName: () -> String?,
                       _ writeFile: (String, AtomicFileWriter.Existing) throws(AtomicFileWriter.Failure) -> Void)
        throws(StallMonitorError) -> (path: String, name: String) {
        let existing: AtomicFileWriter.Existing = replacing ? .replace : .fail
        var name = name
        var attempts = 0
        while true {
            let final = path(of: name)
            do {
                try writeRecreatingDirectory(final, existing, writeFile)
                return (final, name)
            } catch let error where error.code == EEXIST && !replacing && attempts < Self.nameAttempts {
                guard let next = nextName() else { throw .reportWrite(path: final, reason: error.description) }
                attempts += 1
                name = next
            } catch {
                throw .reportWrite(path: final, reason: error.description)
            }
        }
    }

    private func writeRecreatingDirectory(_ final: String, _ existing: AtomicFileWriter.Existing,
                                          _ writeFile: (String, AtomicFileWriter.Existing) throws(AtomicFileWriter.Failure) -> Void)
        throws(AtomicFileWriter.Failure) {
        do {
            try writeFile(final, existing)
        } catch let error where error.code == ENOENT {
            // The directory was removed while the monitor ran: create it again (0700), once.
            try? Self.prepare(directory)
            try writeFile(final, existing)
        }
    }

    /// Removes a report this process wrote.
    func remove(name: String) {
        unlink(path(of: name))
    }

    /// The path of file `name` in the directory.
    func path(of name: String) -> String {
        directoryPath.hasSuffix("/") ? directoryPath + name : directoryPath + "/" + name
    }
}
