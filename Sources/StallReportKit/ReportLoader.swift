import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads one report file defensively: never blocks on a FIFO, refuses files above a size limit
/// before reading them, and refuses JSON nested deeper than a limit before decoding it.
public struct ReportLoader: Sendable {
    /// Default largest file read: 64 MiB. Real reports are tens of kilobytes.
    public static let defaultMaxFileSize = 64 * 1024 * 1024

    /// Largest file, in bytes, that is read at all.
    public var maxFileSize: Int
    /// Deepest JSON nesting accepted.
    public var maxNestingDepth: Int

    /// Creates a loader with the given limits.
    public init(maxFileSize: Int = ReportLoader.defaultMaxFileSize, maxNestingDepth: Int = JSONNesting.defaultLimit) {
        self.maxFileSize = maxFileSize
        self.maxNestingDepth = maxNestingDepth
    }

    /// Reads and decodes the report at `path`; a failure is one line saying what is wrong.
    public func load(path: String) -> Result<StallReport, ReportLoadError> {
        switch readBytes(path: path) {
        case .success(let bytes): return load(data: bytes)
        case .failure(let error): return .failure(error)
        }
    }

    /// Decodes a report from bytes already read (the fuzzed entry point).
    public func load(data: Data) -> Result<StallReport, ReportLoadError> {
        if data.count > maxFileSize { return .failure(.tooLarge(size: data.count, limit: maxFileSize)) }
        if data.isEmpty { return .failure(.read(.empty)) }
        let shape = JSONNesting.shape(of: data, limit: maxNestingDepth)
        if shape.stoppedAtLimit {
            return .failure(.tooDeep(limit: maxNestingDepth))
        }
        do {
            return .success(try StallReport.decode(from: data))
        } catch {
            guard case .invalidJSON = error else { return .failure(.read(error)) }
            // The decoder's message is generic; say what is most likely wrong.
            if JSONNesting.looksBinary(data) {
                return .failure(.read(.invalidJSON("binary data, not JSON text")))
            }
            if shape.endDepth > 0 || shape.endsInsideString {
                return .failure(.read(.invalidJSON("the document ends early (truncated file?)")))
            }
            return .failure(.read(error))
        }
    }

    private func readBytes(path: String) -> Result<Data, ReportLoadError> {
        // O_NONBLOCK: opening a FIFO that slipped in must not wait for a writer.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return .failure(.read(.unreadable(String(cString: strerror(errno))))) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return .failure(.read(.unreadable(String(cString: strerror(errno))))) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { return .failure(.read(.unreadable("not a regular file"))) }
        if Int(st.st_size) > maxFileSize {
            return .failure(.tooLarge(size: Int(st.st_size), limit: maxFileSize))
        }
        // Read at most limit + 1 bytes, in case the file grows while being read.
        var data = Data()
        data.reserveCapacity(Int(st.st_size))
        let chunk = 1 << 20
        var buffer = [UInt8](repeating: 0, count: chunk)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, chunk) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(.read(.unreadable(String(cString: strerror(errno)))))
            }
            if count == 0 { break }
            data.append(contentsOf: buffer[0..<count])
            if data.count > maxFileSize {
                return .failure(.tooLarge(size: data.count, limit: maxFileSize))
            }
        }
        return .success(data)
    }
}

/// Why ``ReportLoader`` could not load a file.
public enum ReportLoadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Reading or decoding failed (see ``ReportReadError``).
    case read(ReportReadError)
    /// The file is larger than the configured limit.
    case tooLarge(size: Int, limit: Int)
    /// The JSON nests deeper than the configured limit.
    case tooDeep(limit: Int)

    /// A one-line explanation for humans.
    public var description: String {
        switch self {
        case .read(let error): return error.description
        case .tooLarge(let size, let limit):
            return "file too large (\(ByteCount.format(size)), limit \(ByteCount.format(limit)); raise it with --max-file-size)"
        case .tooDeep(let limit): return "JSON nested deeper than \(limit) levels; not decoded"
        }
    }
}

/// Human-readable byte counts.
public enum ByteCount {
    /// Formats a byte count as `B`, `KiB` or `MiB` with one decimal.
    public static func format(_ bytes: Int) -> String {
        if bytes < 1024 { return "\(bytes) B" }
        if bytes < 1024 * 1024 { return String(format: "%.1f KiB", Double(bytes) / 1024) }
        return String(format: "%.1f MiB", Double(bytes) / 1024 / 1024)
    }
}
