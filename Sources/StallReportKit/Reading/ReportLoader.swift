import Foundation

/// Reads one report file defensively: never blocks on a FIFO, refuses files above a size limit
/// before reading them (both with `BoundedFileReader`), and refuses JSON nested deeper than a
/// limit before decoding it.
public struct ReportLoader: Sendable {
    /// Default largest file read: 64 MiB. Real reports are tens of kilobytes.
    public static let defaultMaxFileSize = DocumentFile.defaultMaxFileSize

    /// Largest file, in bytes, that is read at all.
    package var maxFileSize: Int
    /// Deepest JSON nesting accepted.
    package var maxNestingDepth: Int

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
        // A large report's samples are read without JSONDecoder's map of every value.
        if let report = LargeReportDecoder.decode(data, depthLimit: maxNestingDepth) { return .success(report) }
        do {
            return .success(try StallReport.decode(from: data))
        } catch {
            guard error.code == .invalidJSON else { return .failure(.read(error)) }
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
///
/// A struct with a ``Code`` (see `ReportReadError`): new codes are not a breaking change.
public struct ReportLoadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is. New codes may be added in any release.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// A stable name of the code, e.g. `tooLarge`.
        package let name: String
        private init(_ name: String) { self.name = name }

        /// Reading or decoding failed (the error's description says how).
        public static let read = Code("read")
        /// The file is larger than the configured limit.
        public static let tooLarge = Code("tooLarge")
        /// The JSON nests deeper than the configured limit.
        public static let tooDeep = Code("tooDeep")

        /// The code's name.
        public var description: String { name }
    }

    /// What kind of failure this is.
    public let code: Code
    /// For ``Code/read``: the reading or decoding failure.
    let readError: ReportReadError?
    /// For ``Code/tooLarge``: the file's size in bytes.
    package let size: Int?
    /// For ``Code/tooLarge`` and ``Code/tooDeep``: the limit that was exceeded.
    package let limit: Int?

    /// Creates a failure of a code; prefer the static functions named after the codes.
    package init(code: Code, readError: ReportReadError? = nil, size: Int? = nil, limit: Int? = nil) {
        self.code = code
        self.readError = readError
        self.size = size
        self.limit = limit
    }

    /// Reading or decoding failed.
    package static func read(_ error: ReportReadError) -> Self { Self(code: .read, readError: error) }
    /// The file is larger than the configured limit.
    package static func tooLarge(size: Int, limit: Int) -> Self { Self(code: .tooLarge, size: size, limit: limit) }
    /// The JSON nests deeper than the configured limit.
    package static func tooDeep(limit: Int) -> Self { Self(code: .tooDeep, limit: limit) }

    /// A one-line explanation for humans.
    public var description: String {
        switch code {
        case .read: return readError?.description ?? "cannot read the report"
        case .tooLarge: return BoundedFileReader.Failure.tooLarge(size: size ?? 0, limit: limit ?? 0).description
        case .tooDeep: return "JSON nested deeper than \(limit ?? 0) levels; not decoded"
        default: return code.name
        }
    }
}
