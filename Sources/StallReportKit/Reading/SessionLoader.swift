import Foundation

/// Reads one session record file defensively (size and nesting limits, no blocking on FIFOs).
public struct SessionLoader: Sendable {
    /// The file rules: size and nesting limits.
    private let file: DocumentFile

    /// Creates a loader; by default with the same limits as ``ReportLoader``.
    public init(maxFileSize: Int = ReportLoader.defaultMaxFileSize, maxNestingDepth: Int = JSONNesting.defaultLimit) {
        file = DocumentFile(maxFileSize: maxFileSize, maxNestingDepth: maxNestingDepth)
    }

    /// Reads and decodes the record at `path`.
    public func load(path: String) -> Result<SessionRecord, SessionReadError> {
        file.bytes(at: path).mapError(Self.error).flatMap(load(data:))
    }

    /// Decodes a record from bytes already read.
    public func load(data: Data) -> Result<SessionRecord, SessionReadError> {
        if case .failure(let refusal) = file.check(data) { return .failure(Self.error(refusal)) }
        do {
            return .success(try SessionRecord.decode(from: data))
        } catch {
            return .failure(error)
        }
    }

    private static func error(_ refusal: DocumentFile.Refusal) -> SessionReadError {
        switch refusal {
        case .read(let failure): return .read(failure)
        case .empty: return .empty
        case .tooDeep(let limit): return .tooDeep(limit: limit)
        }
    }
}
