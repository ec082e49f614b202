import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a whole small file defensively: never blocks on a FIFO (opened non-blocking, refused
/// unless regular), and never reads more than a limit, even when the file grows while read.
public enum BoundedFileReader {
    /// Why a file could not be read.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// Opening or reading failed, or the path is not a regular file.
        case unreadable(String)
        /// The file is larger than the limit.
        case tooLarge(size: Int, limit: Int)

        /// A one-line explanation for humans.
        public var description: String {
            switch self {
            case .unreadable(let why): return "cannot read file: \(why)"
            case .tooLarge(let size, let limit):
                return
                    "file too large (\(ByteCount.format(size)), limit \(ByteCount.format(limit)); raise it with --max-file-size)"
            }
        }
    }

    /// The bytes of the regular file at `path`, at most `limit` of them.
    public static func contents(of path: String, limit: Int) -> Result<Data, Failure> {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return .failure(.unreadable(CString.errorMessage(errno))) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return .failure(.unreadable(CString.errorMessage(errno))) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { return .failure(.unreadable("not a regular file")) }
        if Int(st.st_size) > limit { return .failure(.tooLarge(size: Int(st.st_size), limit: limit)) }
        var data = Data()
        data.reserveCapacity(Int(st.st_size))
        let chunk = 1 << 16
        var buffer = [UInt8](repeating: 0, count: chunk)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, chunk) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(.unreadable(CString.errorMessage(errno)))
            }
            if count == 0 { break }
            data.append(contentsOf: buffer[0..<count])
            if data.count > limit { return .failure(.tooLarge(size: data.count, limit: limit)) }
        }
        return .success(data)
    }
}
