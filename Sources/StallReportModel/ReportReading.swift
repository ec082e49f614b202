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
        if data.isEmpty { throw .empty }
        struct VersionProbe: Decodable { var schemaVersion: Int? }
        let probe: VersionProbe
        do {
            probe = try JSONDecoder().decode(VersionProbe.self, from: data)
        } catch let error as DecodingError {
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty {
                throw .invalidJSON(error.summary(typeDetail: true))
            }
            throw .notAReport("top level is not a JSON object")
        } catch {
            throw .invalidJSON(String(describing: error))
        }
        guard let version = probe.schemaVersion else { throw .notAReport("no schemaVersion") }
        guard version == currentSchemaVersion else { throw .unsupportedSchemaVersion(version) }
        let report: StallReport
        do {
            report = try ReportCoding.makeDecoder().decode(StallReport.self, from: data)
        } catch let error as DecodingError {
            throw .notAReport(error.summary(typeDetail: true))
        } catch {
            throw .notAReport(String(describing: error))
        }
        if let problem = report.schemaViolation { throw .outOfRange(problem) }
        return report
    }

    /// Reads and decodes the report at `url`.
    public static func read(from url: URL) throws(ReportReadError) -> StallReport {
        switch BoundedFileReader.contents(of: url.path, limit: .max) {
        case .success(let data): return try decode(from: data)
        case .failure(.unreadable(let why)): throw .unreadable(why)
        case .failure(let tooLarge): throw .unreadable(tooLarge.description)
        }
    }

    /// Encodes the report as the schema requires.
    public func encoded(pretty: Bool = true) throws -> Data {
        try ReportCoding.makeEncoder(pretty: pretty).encode(self)
    }
}
