import Foundation

/// Decoding of our versioned JSON documents (reports, session records), the same steps for each:
/// a cheap probe of `schemaVersion` (and `kind`), the version check, the full decode, then the
/// document's own range check. Each document type turns the ``Failure`` into its own error.
package enum VersionedJSON {
    /// Where decoding stopped.
    package enum Failure: Error {
        /// No bytes.
        case empty
        /// Not JSON at all (the probe could not parse it).
        case malformed(any Error)
        /// JSON, but not an object with the probed keys.
        case notAnObject
        /// A `kind` was required and the document has another one, or none.
        case wrongKind(found: String?)
        /// No `schemaVersion`.
        case noVersion
        /// A `schemaVersion` this code does not read.
        case unsupportedVersion(Int)
        /// The full decode failed (a key missing or of the wrong type).
        case undecodable(any Error)
        /// Decoded, but a value is outside what the schema allows.
        case outOfRange(String)
    }

    private struct Probe: Decodable {
        var schemaVersion: Int?
        var kind: String?
    }

    /// Decodes a `Document` of schema `version` (and `kind`, when given) from `data`;
    /// `violation` names the first value out of range, nil when there is none.
    package static func decode<Document: Decodable>(
        _ type: Document.Type, from data: Data, version: Int, kind: String? = nil,
        violation: (Document) -> String?
    ) -> Result<Document, Failure> {
        if data.isEmpty { return .failure(.empty) }
        let probe: Probe
        do {
            probe = try JSONDecoder().decode(Probe.self, from: data)
        } catch let error as DecodingError {
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty {
                return .failure(.malformed(error))
            }
            return .failure(.notAnObject)
        } catch {
            return .failure(.malformed(error))
        }
        if let kind, probe.kind != kind { return .failure(.wrongKind(found: probe.kind)) }
        guard let found = probe.schemaVersion else { return .failure(.noVersion) }
        guard found == version else { return .failure(.unsupportedVersion(found)) }
        let document: Document
        do {
            document = try ReportCoding.makeDecoder().decode(Document.self, from: data)
        } catch {
            return .failure(.undecodable(error))
        }
        if let problem = violation(document) { return .failure(.outOfRange(problem)) }
        return .success(document)
    }

    /// A decoding error as one line (`missing key 'id' at loop`), any other error as it describes itself.
    package static func describe(_ error: any Error, typeDetail: Bool) -> String {
        (error as? DecodingError)?.summary(typeDetail: typeDetail) ?? String(describing: error)
    }
}

/// The checks every document file goes through before it is decoded: read without blocking and
/// within a size limit (``BoundedFileReader``), not empty, nested no deeper than a limit.
package struct DocumentFile: Sendable {
    /// Default largest file read: 64 MiB. Real reports are tens of kilobytes.
    package static let defaultMaxFileSize = 64 * 1024 * 1024

    /// Why a file was refused before decoding.
    package enum Refusal: Error, Equatable {
        case read(BoundedFileReader.Failure)
        case empty
        case tooDeep(limit: Int)
    }

    package var maxFileSize: Int
    package var maxNestingDepth: Int

    package init(maxFileSize: Int = DocumentFile.defaultMaxFileSize, maxNestingDepth: Int = JSONNesting.defaultLimit) {
        self.maxFileSize = maxFileSize
        self.maxNestingDepth = maxNestingDepth
    }

    /// The bytes of the file at `path`, within the size limit.
    package func bytes(at path: String) -> Result<Data, Refusal> {
        BoundedFileReader.contents(of: path, limit: maxFileSize).mapError { .read($0) }
    }

    /// The bytes of the file at `path`, read and checked: within the size limit, not empty, not
    /// nested too deep.
    package func checkedBytes(at path: String) -> Result<Data, Refusal> {
        bytes(at: path).flatMap { data in check(data).map { _ in data } }
    }

    /// Checks bytes already read (size, emptiness, nesting); returns their JSON shape.
    package func check(_ data: Data) -> Result<JSONNesting.Shape, Refusal> {
        if data.count > maxFileSize { return .failure(.read(.tooLarge(size: data.count, limit: maxFileSize))) }
        if data.isEmpty { return .failure(.empty) }
        let shape = JSONNesting.shape(of: data, limit: maxNestingDepth)
        return shape.stoppedAtLimit ? .failure(.tooDeep(limit: maxNestingDepth)) : .success(shape)
    }
}
