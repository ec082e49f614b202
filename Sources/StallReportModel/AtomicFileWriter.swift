import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a file atomically: the data goes to a new temporary file in the same directory (created
/// with `mkstemp`, so never shared), which is written, given its permission bits and flushed to
/// disk, then moved into place and the directory flushed. Readers see the old file or the new
/// one, never a partial one. Used by the monitor for every report and by `stallreport` when it
/// rewrites reports.
public enum AtomicFileWriter {
    /// What to do when the target already exists.
    public enum Existing: Sendable {
        /// Replace it (`rename`).
        case replace
        /// Fail with `EEXIST` rather than replace it (`link`, then the temporary file is removed).
        case fail
    }

    /// Why writing failed.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// One line for people.
        public var description: String
        /// The `errno` of the step that failed.
        public var code: Int32
    }

    /// Writes `data` to `path` atomically with permission bits `mode`.
    public static func write(
        _ data: Data, to path: String, mode: mode_t = 0o600, existing: Existing = .replace
    ) throws(Failure) {
        try write(to: path, mode: mode, existing: existing) { fd in data.withUnsafeBytes { writeAll($0, to: fd) } }
    }

    /// Writes `bytes` to `path` atomically with permission bits `mode` (no `Data`: the monitor's
    /// session record, whose writes an idle monitor should not pay Foundation's code pages for).
    /// With `keepingOpen`, returns a close-on-exec descriptor of the file written (open for
    /// writing; the caller closes it), for writes in place into exactly that file later, never
    /// into whatever the name points to by then.
    @discardableResult
    package static func write(
        bytes: [UInt8], to path: String, mode: mode_t = 0o600, existing: Existing = .replace,
        keepingOpen: Bool = false
    ) throws(Failure) -> Int32? {
        try write(to: path, mode: mode, existing: existing, keepingOpen: keepingOpen) { fd in
            bytes.withUnsafeBytes { writeAll($0, to: fd) }
        }
    }

    /// Writes all of `bytes` to `fd`; false on an error.
    private static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> Bool {
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

    @discardableResult
    private static func write(
        to path: String, mode: mode_t, existing: Existing, keepingOpen: Bool = false,
        contents: (Int32) -> Bool
    ) throws(Failure) -> Int32? {
        let (directory, name) = split(path)
        var template = Array("\(directory.isEmpty ? "." : directory)/.\(name).tmp-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw failure("cannot create a temporary file next to \(path)") }
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        var open = true
        defer {
            if open { close(fd) }
            unlink(temporary)  // after rename it is gone; after link it is the second name
        }
        guard contents(fd) else { throw failure("cannot write \(temporary)") }
        guard fchmod(fd, mode) == 0, fsync(fd) == 0 else { throw failure("cannot write \(temporary)") }
        var kept = keepingOpen ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1
        defer { if kept >= 0 { close(kept) } }
        open = false
        guard close(fd) == 0 else { throw failure("cannot write \(temporary)") }
        switch existing {
        case .replace:
            guard rename(temporary, path) == 0 else { throw failure("cannot rename \(temporary) to \(path)") }
        case .fail:
            guard link(temporary, path) == 0 else { throw failure("cannot create \(path)") }
        }
        let directoryFD = Glibc.open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            fsync(directoryFD)
            close(directoryFD)
        }
        defer { kept = -1 }  // handed to the caller
        return kept >= 0 ? kept : nil
    }

    /// The directory and the last component of `path`, as `NSString`'s `deletingLastPathComponent`
    /// and `lastPathComponent` give them, in plain Swift: the monitor writes its session record at
    /// start, and an idle monitor should not touch `NSString`'s path code for that.
    package static func split(_ path: String) -> (directory: String, name: String) {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard trimmed != "/", let slash = trimmed.lastIndex(of: "/") else { return ("", String(trimmed)) }
        var directory = trimmed[..<slash]
        while directory.hasSuffix("/") { directory.removeLast() }
        return (directory.isEmpty ? "/" : String(directory), String(trimmed[trimmed.index(after: slash)...]))
    }

    private static func failure(_ what: String) -> Failure {
        let code = errno
        let reason = CString.errorMessage(code)
        return Failure(description: "\(what): \(reason)", code: code)
    }
}
