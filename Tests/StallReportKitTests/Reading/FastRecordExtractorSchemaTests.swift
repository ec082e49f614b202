import Foundation
import StallReportKitTestSupport
import Testing

@testable import StallReportKit

/// `FastRecordExtractor` lists the keys of every object it reads by hand: each list and its
/// required bits must match `Reports/stall-report.schema.json`, and a property the schema gains
/// must be either read or named here as skipped (the fast path skips unknown keys after checking
/// their JSON), so that no field is missed silently.
@Suite("Fast record extractor against the report schema")
struct FastRecordExtractorSchemaTests {
    /// Schema properties the fast path does not read (it only summarizes a report): skipped, their
    /// JSON still checked.
    static let skipped: [String: Set<String>] = [
        "": ["starvation", "representativeAsyncCallersInJob"],
        "sampling": ["asyncCallersNote"],
        "samples": ["asyncCallers", "asyncJobFrames", "asyncCallersFromJobStart", "asyncJobCallers"],
    ]
    /// Keys the fast path reads that the schema does not list: `kind` marks files that are not
    /// stall reports (session records), which the version probe turns away.
    static let extra: [String: Set<String>] = ["": ["kind"]]

    static func schemaObject(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: PackageRoot.url.appendingPathComponent("Reports/stall-report.schema.json"))
        let schema = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
        guard !name.isEmpty else { return schema }
        let properties = try #require(schema["properties"] as? [String: Any])
        let property = try #require(properties[name] as? [String: Any], "no \(name) in the schema")
        return (property["items"] as? [String: Any]) ?? property
    }

    @Test("every key table reads the schema's properties and requires exactly its required keys")
    func tablesMatchTheSchema() throws {
        let tables = FastRecordExtractor.keyTables
        #expect(tables.count == 8)
        for (object, table) in tables {
            let schema = try Self.schemaObject(object)
            let properties = Set(try #require(schema["properties"] as? [String: Any]).keys)
            let required = Set(schema["required"] as? [String] ?? [])
            let keys = Set(table.keys)
            let requiredByTable = Set(
                table.keys.enumerated().filter { table.required & (1 << UInt64($0.offset)) != 0 }.map(\.element))
            #expect(requiredByTable == required, "\(object.isEmpty ? "report" : object): required keys differ")
            #expect(
                keys.subtracting(properties) == Self.extra[object, default: []], "\(object): keys not in the schema")
            #expect(
                properties.subtracting(keys) == Self.skipped[object, default: []],
                "\(object): schema properties neither read nor listed as skipped")
        }
    }
}
