import Foundation

/// Why a file could not be used as a session record.
///
/// A struct with a ``Code`` (see ``ReportReadError``): new codes are not a breaking change.
public struct SessionReadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is. New codes may be added in any release.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// A stable name of the code, e.g. `notASession`.
        public let name: String
        private init(_ name: String) { self.name = name }

        /// The file could not be read, or is too large: ``SessionReadError/fileFailure`` says how.
        public static let read = Code("read")
        /// The file is empty.
        public static let empty = Code("empty")
        /// The JSON nests deeper than the limit.
        public static let tooDeep = Code("tooDeep")
        /// The file is not valid JSON.
        public static let invalidJSON = Code("invalidJSON")
        /// The JSON is not a session record (wrong `kind`, a key missing or of the wrong type, a
        /// negative count).
        public static let notASession = Code("notASession")
        /// The record's schema version is one this code does not know.
        public static let unsupportedSchemaVersion = Code("unsupportedSchemaVersion")

        /// The code's name.
        public var description: String { name }
    }

    /// What kind of failure this is.
    public let code: Code
    /// What exactly is wrong, in words (empty when the code says it all).
    public let detail: String
    /// For ``Code/read``: how reading the file failed.
    public let fileFailure: BoundedFileReader.Failure?
    /// For ``Code/tooDeep`` the nesting limit, for ``Code/unsupportedSchemaVersion`` the version found.
    public let number: Int?

    /// Creates a failure of a code; prefer the static members named after the codes.
    public init(code: Code, detail: String = "", fileFailure: BoundedFileReader.Failure? = nil, number: Int? = nil) {
        self.code = code
        self.detail = detail
        self.fileFailure = fileFailure
        self.number = number
    }

    /// The file could not be read, or is too large.
    public static func read(_ failure: BoundedFileReader.Failure) -> Self { Self(code: .read, fileFailure: failure) }
    /// The file is empty.
    public static let empty = Self(code: .empty)
    /// The JSON nests deeper than the limit.
    public static func tooDeep(limit: Int) -> Self { Self(code: .tooDeep, number: limit) }
    /// The file is not valid JSON.
    public static func invalidJSON(_ why: String) -> Self { Self(code: .invalidJSON, detail: why) }
    /// The JSON is not a session record.
    public static func notASession(_ why: String) -> Self { Self(code: .notASession, detail: why) }
    /// The record's schema version is one this code does not know.
    public static func unsupportedSchemaVersion(_ version: Int) -> Self {
        Self(code: .unsupportedSchemaVersion, number: version)
    }

    /// A one-line explanation for humans.
    public var description: String {
        switch code {
        case .read: return fileFailure?.description ?? "cannot read the session record"
        case .empty: return "session record is empty (the process may have died while creating it)"
        case .tooDeep: return "JSON nested deeper than \(number ?? 0) levels; not decoded"
        case .invalidJSON: return "session record is not valid JSON: \(detail)"
        case .notASession: return "not a session record: \(detail)"
        case .unsupportedSchemaVersion:
            return
                "unsupported session schemaVersion \(number.map(String.init) ?? "?") (this tool reads version \(SessionRecord.currentSchemaVersion))"
        default: return "\(code.name): \(detail)"
        }
    }
}

extension SessionRecord {
    /// Decodes a record from JSON, telling apart invalid JSON, other JSON and unknown versions.
    public static func decode(from data: Data) throws(SessionReadError) -> SessionRecord {
        switch VersionedJSON.decode(
            SessionRecord.self, from: data, version: currentSchemaVersion, kind: kindValue,
            violation: { $0.invalidValue })
        {
        case .success(let record): return record
        case .failure(.empty): throw .empty
        case .failure(.malformed(let error)):
            guard error is DecodingError else { throw .invalidJSON(String(describing: error)) }
            throw .invalidJSON(
                JSONNesting.looksBinary(data) ? "binary data, not JSON text" : "the document is malformed or ends early"
            )
        case .failure(.notAnObject): throw .notASession("top level is not a JSON object with kind \"session\"")
        case .failure(.wrongKind(let found)):
            throw .notASession(found.map { "kind is \"\($0)\", not \"session\"" } ?? "no kind \"session\"")
        case .failure(.noVersion): throw .notASession("no schemaVersion")
        case .failure(.unsupportedVersion(let version)): throw .unsupportedSchemaVersion(version)
        case .failure(.undecodable(let error)): throw .notASession(VersionedJSON.describe(error, typeDetail: false))
        case .failure(.outOfRange(let problem)): throw .notASession(problem)
        }
    }

    /// The largest monitored time a session record may hold (1e15 ms, about 31,700 years: a
    /// server's session may outlive any one stall's bound, ``StallReport/largestMilliseconds``).
    public static let largestMonitoredMilliseconds = 1e15

    /// The first value no monitor writes (a negative count or time), described; nil when none.
    var invalidValue: String? {
        if !(monitoredMs >= 0 && monitoredMs.isFinite) { return "monitoredMs must be a finite number, 0 or more" }
        if monitoredMs > Self.largestMonitoredMilliseconds {
            return "monitoredMs must be at most \(Self.largestMonitoredMilliseconds)"
        }
        for (key, value) in [("spans", spans), ("stalls", stalls), ("reportsWritten", reportsWritten), ("pid", pid)] {
            if value < 0 { return "\(key) must be 0 or more" }
            if value > StallReport.largestCount { return "\(key) must be at most \(StallReport.largestCount)" }
        }
        if let reason = reportsDropped.first(where: { $0.value < 0 })?.key {
            return "reportsDropped.\(reason) must be 0 or more"
        }
        if let reason = reportsDropped.first(where: { $0.value > StallReport.largestCount })?.key {
            return "reportsDropped.\(reason) must be at most \(StallReport.largestCount)"
        }
        return nil
    }

    /// Encodes the record as the monitor writes it (sorted keys, ISO 8601 dates).
    public func encoded(pretty: Bool = true) throws -> Data {
        try ReportCoding.makeEncoder(pretty: pretty).encode(self)
    }
}
