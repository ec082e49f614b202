import Foundation

extension StallReportCLI.Run {
    /// stdout read as a JSON object (nil when it is JSON of another kind), for `--format json`.
    func jsonObject() throws -> [String: Any]? {
        try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any]
    }
}
