import Foundation

/// Why a file could not be used as a session record.
public enum SessionReadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file could not be read, or is too large.
    case read(BoundedFileReader.Failure)
    /// The file is empty.
    case empty
    /// The JSON nests deeper than the limit.
    case tooDeep(limit: Int)
    /// The file is not valid JSON.
    case invalidJSON(String)
    /// The JSON is not a session record (wrong `kind`, a key missing or of the wrong type, a
    /// negative count).
    case notASession(String)
    /// The record's schema version is one this code does not know.
    case unsupportedSchemaVersion(Int)

    /// A one-line explanation for humans.
    public var description: String {
        switch self {
        case .read(let failure): return failure.description
        case .empty: return "session record is empty (the process may have died while creating it)"
        case .tooDeep(let limit): return "JSON nested deeper than \(limit) levels; not decoded"
        case .invalidJSON(let why): return "session record is not valid JSON: \(why)"
        case .notASession(let why): return "not a session record: \(why)"
        case .unsupportedSchemaVersion(let version):
            return "unsupported session schemaVersion \(version) (this tool reads version \(SessionRecord.currentSchemaVersion))"
        }
    }
}

extension SessionRecord {
    /// Decodes a record from JSON, telling apart invalid JSON, other JSON and unknown versions.
    public static func decode(from data: Data) throws(SessionReadError) -> SessionRecord {
        if data.isEmpty { throw .empty }
        struct Probe: Decodable {
            var schemaVersion: Int?
            var kind: String?
        }
        let probe: Probe
        do {
            probe = try JSONDecoder().decode(Probe.self, from: data)
        } catch let error as DecodingError {
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty {
                throw .invalidJSON(JSONNesting.looksBinary(data) ? "binary data, not JSON text" : "the document is malformed or ends early")
            }
            throw .notASession("top level is not a JSON object with kind \"session\"")
        } catch {
            throw .invalidJSON(String(describing: error))
        }
        guard probe.kind == kindValue else {
            throw .notASession(probe.kind.map { "kind is \"\($0)\", not \"session\"" } ?? "no kind \"session\"")
        }
        guard let version = probe.schemaVersion else { throw .notASession("no schemaVersion") }
        guard version == currentSchemaVersion else { throw .unsupportedSchemaVersion(version) }
        let record: SessionRecord
        do {
            record = try ReportCoding.makeDecoder().decode(SessionRecord.self, from: data)
        } catch let error as DecodingError {
            throw .notASession(error.summary())
        } catch {
            throw .notASession(String(describing: error))
        }
        if let problem = record.invalidValue { throw .notASession(problem) }
        return record
    }

    /// The first value no monitor writes (a negative count or time), described; nil when none.
    var invalidValue: String? {
        if !(monitoredMs >= 0 && monitoredMs.isFinite) { return "monitoredMs must be a finite number, 0 or more" }
        for (key, value) in [("spans", spans), ("stalls", stalls), ("reportsWritten", reportsWritten), ("pid", pid)] where value < 0 {
            return "\(key) must be 0 or more"
        }
        if let reason = reportsDropped.first(where: { $0.value < 0 })?.key { return "reportsDropped.\(reason) must be 0 or more" }
        return nil
    }

    /// Encodes the record as the monitor writes it (sorted keys, ISO 8601 dates).
    public func encoded(pretty: Bool = true) throws -> Data {
        try ReportCoding.makeEncoder(pretty: pretty).encode(self)
    }
}

/// Reads one session record file defensively (size and nesting limits, no blocking on FIFOs).
public struct SessionLoader: Sendable {
    /// Largest file, in bytes, that is read at all.
    public var maxFileSize: Int
    /// Deepest JSON nesting accepted.
    public var maxNestingDepth: Int

    /// Creates a loader; by default with the same limits as ``ReportLoader``.
    public init(maxFileSize: Int = ReportLoader.defaultMaxFileSize, maxNestingDepth: Int = JSONNesting.defaultLimit) {
        self.maxFileSize = maxFileSize
        self.maxNestingDepth = maxNestingDepth
    }

    /// Reads and decodes the record at `path`.
    public func load(path: String) -> Result<SessionRecord, SessionReadError> {
        switch BoundedFileReader.contents(of: path, limit: maxFileSize) {
        case .success(let data): return load(data: data)
        case .failure(let failure): return .failure(.read(failure))
        }
    }

    /// Decodes a record from bytes already read.
    public func load(data: Data) -> Result<SessionRecord, SessionReadError> {
        if data.count > maxFileSize { return .failure(.read(.tooLarge(size: data.count, limit: maxFileSize))) }
        if data.isEmpty { return .failure(.empty) }
        if JSONNesting.shape(of: data, limit: maxNestingDepth).stoppedAtLimit { return .failure(.tooDeep(limit: maxNestingDepth)) }
        do {
            return .success(try SessionRecord.decode(from: data))
        } catch {
            return .failure(error)
        }
    }
}
