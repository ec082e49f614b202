import Foundation

extension BlockingCallsReport {
    /// Reads the blocking-calls report at `path` defensively (size and nesting limits, no
    /// blocking on FIFOs, version and kind checked, values in range); the failure is one line
    /// that says what is wrong.
    package static func read(
        path: String, file: DocumentFile = DocumentFile()
    ) -> Result<BlockingCallsReport, BlockingCallsReadError> {
        let data: Data
        switch file.checkedBytes(at: path) {
        case .success(let bytes): data = bytes
        case .failure(.read(let failure)): return .failure(.init(failure.description))
        case .failure(.empty): return .failure(.init("blocking-calls report is empty"))
        case .failure(.tooDeep(let limit)):
            return .failure(.init("JSON nested deeper than \(limit) levels; not decoded"))
        }
        switch VersionedJSON.decode(
            BlockingCallsReport.self, from: data, version: currentSchemaVersion, kind: kindValue, violation: \.violation
        ) {
        case .success(let report): return .success(report)
        case .failure(.empty): return .failure(.init("blocking-calls report is empty"))
        case .failure(.malformed(let error)):
            return .failure(.init("not valid JSON: \(VersionedJSON.describe(error, typeDetail: false))"))
        case .failure(.notAnObject):
            return .failure(
                .init("not a blocking-calls report: top level is not a JSON object with kind \"\(kindValue)\""))
        case .failure(.wrongKind(let found)):
            return .failure(.init("not a blocking-calls report: kind \(found.map { "\"\($0)\"" } ?? "missing")"))
        case .failure(.noVersion): return .failure(.init("not a blocking-calls report: no schemaVersion"))
        case .failure(.unsupportedVersion(let version)):
            return .failure(
                .init(
                    "blocking-calls report of schema version \(version); this stallreport reads version \(currentSchemaVersion)"
                ))
        case .failure(.undecodable(let error)):
            return .failure(.init("not a blocking-calls report: \(VersionedJSON.describe(error, typeDetail: false))"))
        case .failure(.outOfRange(let problem)):
            return .failure(.init("blocking-calls report out of range: \(problem)"))
        }
    }

    /// The first value outside what the schema allows, nil when there is none.
    var violation: String? {
        func bad(_ value: Double) -> Bool { !value.isFinite || value < 0 }
        if bad(intervalMs) || bad(thresholdMs) { return "intervalMs and thresholdMs must be finite and not negative" }
        if omittedCallSites < 0 || droppedCalls < 0 { return "omittedCallSites and droppedCalls must not be negative" }
        for (index, site) in callSites.enumerated() {
            if site.count < 1 || bad(site.totalMs) || bad(site.maxMs) || site.durationsMs.contains(where: bad) {
                return "callSites[\(index)]: count must be at least 1, durations finite and not negative"
            }
        }
        return nil
    }
}

/// Why a file could not be used as a blocking-calls report: one line.
package struct BlockingCallsReadError: Error, Sendable, Equatable, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
