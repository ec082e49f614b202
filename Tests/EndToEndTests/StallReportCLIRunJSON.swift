import Foundation
import Testing

extension StallReportCLI.Run {
    /// stdout read as a JSON object (nil when it is JSON of another kind), for `--format json`.
    func jsonObject() throws -> [String: Any]? {
        try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any]
    }
}

extension StallReportCLI {
    /// `stallreport summarize --format json <path>`'s object, recording an issue unless the run
    /// exits 0 and says nothing on stderr.
    static func jsonSummary(of path: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any]
    {
        let run = try run(["summarize", "--format", "json", path])
        #expect(run.status == 0, "\(run)", sourceLocation: sourceLocation)
        #expect(run.stderr.isEmpty, "\(run)", sourceLocation: sourceLocation)
        return try #require(try run.jsonObject(), "\(run)", sourceLocation: sourceLocation)
    }
}
