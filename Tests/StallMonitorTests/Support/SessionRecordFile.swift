import Foundation

/// The session record a monitor keeps next to its reports, read as plain JSON (the library's
/// record type is internal; these are the keys `stallreport` relies on).
struct SessionRecordFile {
    let url: URL
    let json: [String: Any]

    init(_ url: URL) throws {
        self.url = url
        let data = try Data(contentsOf: url)
        json = try (JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }

    var cleanStop: Bool? { json["cleanStop"] as? Bool }
    var spans: Int? { json["spans"] as? Int }
    var stalls: Int? { json["stalls"] as? Int }
    var reportsWritten: Int? { json["reportsWritten"] as? Int }
    var reportsDropped: [String: Int] { (json["reportsDropped"] as? [String: Int]) ?? [:] }
    var pid: Int? { json["pid"] as? Int }
}
