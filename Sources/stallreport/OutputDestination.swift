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

    /// Opens `path` for writing (never creating nor replacing it) and writes all of `data`.
    private static func writeInPlace(_ data: Data, to path: String) throws {
        var fd: Int32
        repeat { fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY) } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw Failure(code: errno) }
        defer { close(fd) }
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
