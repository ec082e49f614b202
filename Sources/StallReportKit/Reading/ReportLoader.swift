import Foundation

/// Reads one report file defensively: never blocks on a FIFO, refuses files above a size limit
/// before reading them (both with ``BoundedFileReader``), and refuses JSON nested deeper than a
/// limit before decoding it.
public struct ReportLoader: Sendable {
    /// Default largest file read: 64 MiB. Real reports are tens of kilobytes.
    public static let defaultMaxFileSize = DocumentFile.defaultMaxFileSize

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
        switch file.bytes(at: path) {
        case .success(let bytes): return load(data: bytes)
        case .failure(let refusal): return .failure(Self.error(refusal))
        }
    }

    /// Decodes a report from bytes already read (the fuzzed entry point).
    public func load(data: Data) -> Result<StallReport, ReportLoadError> {
        let shape: JSONNesting.Shape
        switch file.check(data) {
        case .success(let checked): shape = checked
        case .failure(let refusal): return .failure(Self.error(refusal))
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

    private var file: DocumentFile { DocumentFile(maxFileSize: maxFileSize, maxNestingDepth: maxNestingDepth) }

    private static func error(_ refusal: DocumentFile.Refusal) -> ReportLoadError {
        switch refusal {
        case .read(.unreadable(let why)): return .read(.unreadable(why))
        case .read(.tooLarge(let size, let limit)): return .tooLarge(size: size, limit: limit)
        case .empty: return .read(.empty)
        case .tooDeep(let limit): return .tooDeep(limit: limit)
        }
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
        case .tooLarge(let size, let limit): return BoundedFileReader.Failure.tooLarge(size: size, limit: limit).description
        case .tooDeep(let limit): return "JSON nested deeper than \(limit) levels; not decoded"
        }
    }
}
