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
        switch VersionedJSON.decode(SessionRecord.self, from: data, version: currentSchemaVersion, kind: kindValue, violation: { $0.invalidValue }) {
        case .success(let record): return record
        case .failure(.empty): throw .empty
        case .failure(.malformed(let error)):
            guard error is DecodingError else { throw .invalidJSON(String(describing: error)) }
            throw .invalidJSON(JSONNesting.looksBinary(data) ? "binary data, not JSON text" : "the document is malformed or ends early")
        case .failure(.notAnObject): throw .notASession("top level is not a JSON object with kind \"session\"")
        case .failure(.wrongKind(let found)):
            throw .notASession(found.map { "kind is \"\($0)\", not \"session\"" } ?? "no kind \"session\"")
        case .failure(.noVersion): throw .notASession("no schemaVersion")
        case .failure(.unsupportedVersion(let version)): throw .unsupportedSchemaVersion(version)
        case .failure(.undecodable(let error)): throw .notASession(VersionedJSON.describe(error, typeDetail: false))
        case .failure(.outOfRange(let problem)): throw .notASession(problem)
        }
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
