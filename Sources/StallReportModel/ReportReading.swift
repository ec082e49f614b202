import Foundation

/// Why a file could not be read as a stall report.
public enum ReportReadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file could not be opened or read.
    case unreadable(String)
    /// The file is empty.
    case empty
    /// The file is not valid JSON.
    case invalidJSON(String)
    /// The JSON is not a stall report (a required key is missing or has the wrong type).
    case notAReport(String)
    /// The report's schema version is one this code does not know.
    case unsupportedSchemaVersion(Int)
    /// A value is outside what the schema allows (e.g. a negative duration).
    case outOfRange(String)

    /// A one-line explanation for humans.
    public var description: String {
        switch self {
        case .unreadable(let why): return "cannot read file: \(why)"
        case .empty: return "file is empty"
        case .invalidJSON(let why): return "invalid JSON: \(why)"
        case .notAReport(let why): return "not a stall report: \(why)"
        case .outOfRange(let why): return "value out of range: \(why)"
        case .unsupportedSchemaVersion(let version):
            return "unsupported schemaVersion \(version) (this tool reads version \(StallReport.currentSchemaVersion))"
        }
    }
}

extension StallReport {
    /// Decodes a report from JSON data, telling apart invalid JSON, non-reports and unknown versions.
    public static func decode(from data: Data) throws(ReportReadError) -> StallReport {
        switch VersionedJSON.decode(StallReport.self, from: data, version: currentSchemaVersion, violation: { $0.schemaViolation }) {
        case .success(let report): return report
        case .failure(.empty): throw .empty
        case .failure(.malformed(let error)): throw .invalidJSON(VersionedJSON.describe(error, typeDetail: true))
        case .failure(.notAnObject), .failure(.wrongKind): throw .notAReport("top level is not a JSON object")
        case .failure(.noVersion): throw .notAReport("no schemaVersion")
        case .failure(.unsupportedVersion(let version)): throw .unsupportedSchemaVersion(version)
        case .failure(.undecodable(let error)): throw .notAReport(VersionedJSON.describe(error, typeDetail: true))
        case .failure(.outOfRange(let problem)): throw .outOfRange(problem)
        }
    }

    /// Reads and decodes the report at `url`, with the limits ``DocumentFile`` applies to every
    /// document (64 MiB, nesting depth).
    public static func read(from url: URL) throws(ReportReadError) -> StallReport {
        let data: Data
        switch DocumentFile().checkedBytes(at: url.path) {
        case .success(let bytes): data = bytes
        case .failure(.read(.unreadable(let why))): throw .unreadable(why)
        case .failure(.read(let tooLarge)): throw .unreadable(tooLarge.description)
        case .failure(.empty): throw .empty
        case .failure(.tooDeep(let limit)): throw .invalidJSON("nested deeper than \(limit) levels; not decoded")
        }
        return try decode(from: data)
    }

    /// Encodes the report as the schema requires.
    public func encoded(pretty: Bool = true) throws -> Data {
        try ReportCoding.makeEncoder(pretty: pretty).encode(self)
    }
}
