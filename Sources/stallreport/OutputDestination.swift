import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where an output file goes. A regular file or a new path is replaced atomically (temporary file,
/// then rename), so readers never see half a file. Anything else that exists (a device such as
/// `/dev/null`, a FIFO, a socket, a terminal) is opened and written to as it is: renaming over it
/// would replace the device node itself with a regular file (for `/dev/null`, for the whole
/// machine when run as root).
enum OutputDestination {
    /// Why writing to a non-regular file failed.
    struct Failure: Error, LocalizedError {
        /// The `errno` of the step that failed.
        var code: Int32

        var errorDescription: String? { String(cString: strerror(code)) }
    }

    /// Writes `data` to `path`: in place when `path` exists and is not a regular file (or a
    /// directory, which fails as before), else atomically.
    static func write(_ data: Data, to path: String) throws {
        var st = stat()
        if stat(path, &st) == 0 {
            let type = st.st_mode & S_IFMT
            if type != S_IFREG && type != S_IFDIR {
                try writeInPlace(data, to: path)
                return
            }
        }
        try data.write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// Writes what `produce` hands its sink, chunk by chunk, to `path` as ``write(_:to:)`` would
    /// write it all at once (`-`: stdout; in place into a device or FIFO; else a temporary file
    /// beside `path`, renamed over it once complete and removed if producing fails), so output
    /// larger than memory should hold is never held whole.
    static func stream(to path: String, _ produce: ((Data) throws -> Void) throws -> Void) throws {
        if path == "-" {
            try produce { try writeAll($0, to: STDOUT_FILENO) }
            return
        }
        var st = stat()
        if stat(path, &st) == 0, st.st_mode & S_IFMT != S_IFREG, st.st_mode & S_IFMT != S_IFDIR {
            let fd = try openInPlace(path)
            defer { close(fd) }
            try produce { try writeAll($0, to: fd) }
            return
        }
        var template = Array((path + ".stallreport-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw Failure(code: errno) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        do {
            defer { close(fd) }
            // As `Data.write(options: .atomic)`: the file gets the permissions a new file gets.
            let mask = umask(0)
            umask(mask)
            fchmod(fd, 0o666 & ~mask)
            try produce { try writeAll($0, to: fd) }
            guard fsync(fd) == 0 else { throw Failure(code: errno) }
        } catch {
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw Failure(code: code)
        }
    }

    /// Opens `path` for writing, never creating nor replacing it.
    private static func openInPlace(_ path: String) throws -> Int32 {
        var fd: Int32
        repeat { fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY) } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw Failure(code: errno) }
        return fd
    }

    /// Opens `path` for writing (never creating nor replacing it) and writes all of `data`.
    private static func writeInPlace(_ data: Data, to path: String) throws {
        let fd = try openInPlace(path)
        defer { close(fd) }
        try writeAll(data, to: fd)
    }

    /// Writes all of `data` to `fd`.
    private static func writeAll(_ data: Data, to fd: Int32) throws {
        try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) throws in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw Failure(code: errno)
                }
                offset += written
            }
        }
    }
}
