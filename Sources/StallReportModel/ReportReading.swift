import Foundation

/// Why a file could not be read as a stall report.
///
/// A struct with a ``Code``, so that a new kind of failure is not a breaking change: compare
/// ``code`` with the known codes and keep a default. The static members of the same names build
/// failures of each code.
public struct ReportReadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is. New codes may be added in any release.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// A stable name of the code, e.g. `invalidJSON`.
        public let name: String
        private init(_ name: String) { self.name = name }

        /// The file could not be opened or read.
        public static let unreadable = Code("unreadable")
        /// The file is empty.
        public static let empty = Code("empty")
        /// The file is not valid JSON.
        public static let invalidJSON = Code("invalidJSON")
        /// The JSON is not a stall report (a required key is missing or has the wrong type).
        public static let notAReport = Code("notAReport")
        /// The report's schema version is one this code does not know.
        public static let unsupportedSchemaVersion = Code("unsupportedSchemaVersion")
        /// A value is outside what the schema allows (e.g. a negative duration).
        public static let outOfRange = Code("outOfRange")

        /// The code's name.
        public var description: String { name }
    }

    /// What kind of failure this is.
    public let code: Code
    /// What exactly is wrong, in words (empty when the code says it all).
    public let detail: String
    /// The schema version found, for ``Code/unsupportedSchemaVersion``.
    public let schemaVersion: Int?

    /// Creates a failure of a code; prefer the static members named after the codes.
    public init(code: Code, detail: String, schemaVersion: Int? = nil) {
        self.code = code
        self.detail = detail
        self.schemaVersion = schemaVersion
    }

    /// The file could not be opened or read.
    public static func unreadable(_ why: String) -> Self { Self(code: .unreadable, detail: why) }
    /// The file is empty.
    public static let empty = Self(code: .empty, detail: "")
    /// The file is not valid JSON.
    public static func invalidJSON(_ why: String) -> Self { Self(code: .invalidJSON, detail: why) }
    /// The JSON is not a stall report.
    public static func notAReport(_ why: String) -> Self { Self(code: .notAReport, detail: why) }
    /// The report's schema version is one this code does not know.
    public static func unsupportedSchemaVersion(_ version: Int) -> Self {
        Self(code: .unsupportedSchemaVersion, detail: "schemaVersion \(version)", schemaVersion: version)
    }
    /// A value is outside what the schema allows.
    public static func outOfRange(_ why: String) -> Self { Self(code: .outOfRange, detail: why) }

    /// A one-line explanation for humans.
    public var description: String {
        switch code {
        case .unreadable: return "cannot read file: \(detail)"
        case .empty: return "file is empty"
        case .invalidJSON: return "invalid JSON: \(detail)"
        case .notAReport: return "not a stall report: \(detail)"
        case .outOfRange: return "value out of range: \(detail)"
        case .unsupportedSchemaVersion:
            return
                "unsupported schemaVersion \(schemaVersion.map(String.init) ?? "?") (this tool reads version \(StallReport.currentSchemaVersion))"
        default: return "\(code.name): \(detail)"
        }
    }
}

extension StallReport {
    /// Decodes a report from JSON data, telling apart invalid JSON, non-reports and unknown versions.
    public static func decode(from data: Data) throws(ReportReadError) -> StallReport {
        switch VersionedJSON.decode(
            StallReport.self, from: data, version: currentSchemaVersion, violation: { $0.schemaViolation })
        {
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

    /// Reads and decodes the report at `url`, with the limits `DocumentFile` applies to every
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
        let encoder = ReportCoding.makeEncoder(pretty: pretty)
        return try ChunkedReportEncoding.encode(self, pretty: pretty) { try encoder.encode($0) }
    }

    /// The bytes the monitor writes to a report file: compact JSON (no indentation), a third
    /// smaller than pretty-printed and quicker to read; `jq .` or `stallreport show` print it
    /// readably. Readers accept both. The bytes are `encoded(pretty: false)`'s, made by
    /// ``CompactJSONEncoder`` (the monitor writes reports from inside the host).
    package func fileData() throws -> Data {
        let encoder = CompactJSONEncoder()
        return try ChunkedReportEncoding.encode(self, pretty: false) { try encoder.encode($0) }
    }
}
