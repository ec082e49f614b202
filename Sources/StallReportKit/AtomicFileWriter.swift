import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Replaces a file atomically: the data goes to a new temporary file in the same directory, which
/// is flushed to disk and renamed over the target. Readers see the old file or the new one, never
/// a partial one. The new file gets the given permission bits (e.g. the old file's).
public enum AtomicFileWriter {
    /// Why writing failed.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// One line for people.
        public var description: String
    }

    /// Writes `data` to `path` atomically with permission bits `mode`.
    public static func write(_ data: Data, to path: String, mode: mode_t = 0o600) throws(Failure) {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        var template = Array("\(directory.isEmpty ? "." : directory)/.\(name).tmp-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw Failure(description: "cannot create a temporary file next to \(path): \(String(cString: strerror(errno)))") }
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        var ok = false
        defer {
            if !ok { unlink(temporary) }
        }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: false)
        do {
            try handle.write(contentsOf: data)
        } catch {
            close(fd)
            throw Failure(description: "cannot write \(temporary): \((error as NSError).localizedDescription)")
        }
        guard fchmod(fd, mode) == 0, fsync(fd) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw Failure(description: "cannot write \(temporary): \(reason)")
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            throw Failure(description: "cannot rename \(temporary) to \(path): \(String(cString: strerror(errno)))")
        }
        ok = true
    }
}
