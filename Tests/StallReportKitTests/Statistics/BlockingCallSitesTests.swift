import Foundation
import StallReportKitTestSupport
import StallReportModel
import Testing

@testable import StallReportKit

/// Blocking-calls reports folded by call site: totals, p95 and the time window; the budgets of
/// the gate; and the JSON Schema of the report, key for key with the model.
@Suite("Blocking call sites")
struct BlockingCallSitesTests {
    static let process = StallReport.Process(
        pid: 7, executableName: "app", executablePath: "/app", appVersion: nil, hostName: "h",
        os: "Linux", osVersion: "6", architecture: "x86_64")

    static func site(
        _ fingerprint: String, _ durations: [Double], call: String = "usleep"
    ) -> BlockingCallsReport.CallSite {
        BlockingCallsReport.CallSite(
            call: call, loopKind: "concurrencyPool", fingerprint: fingerprint, callSite: "handler()",
            count: durations.count, totalMs: durations.reduce(0, +), maxMs: durations.max() ?? 0,
            durationsMs: durations, threads: [42],
            stack: [.init(address: "0x10", symbol: "handler()", file: "a.swift", line: 3)])
    }

    static func report(at seconds: Double, _ sites: [BlockingCallsReport.CallSite]) -> BlockingCallsReport {
        BlockingCallsReport(
            id: "r\(seconds)", startedAt: Date(timeIntervalSince1970: 1_800_000_000 + seconds), intervalMs: 60_000,
            thresholdMs: 10, process: process, callSites: sites, omittedCallSites: 1, droppedCalls: 2, tags: ["a": "b"])
    }

    @Test(
        "two reports of one call site add up; p95 is the nearest rank over every kept duration; the time window applies"
    )
    func folding() {
        var sites = BlockingCallSites()
        let window = RecordFilter(since: Date(timeIntervalSince1970: 1_800_000_000))
        sites.add(
            Self.report(at: 10, [Self.site("aa", [10, 20, 30]), Self.site("bb", [50])]), path: "/r/2.json",
            filter: window)
        var other = BlockingCallSites()
        other.add(
            Self.report(at: 20, [Self.site("aa", Array(repeating: 11, count: 17))]), path: "/r/1.json", filter: window)
        other.add(Self.report(at: -5, [Self.site("aa", [999])]), path: "/r/0.json", filter: window)
        sites.merge(other)
        let stats = sites.stats()
        #expect(stats.map(\.fingerprint) == ["aa", "bb"])
        #expect(
            stats[0].count == 20 && stats[0].totalMs == 60 + 17 * 11 && stats[0].maxMs == 30 && stats[0].reports == 2)
        #expect(stats[0].p95Ms == 20, "rank 19 of 20: 17 × 11, 10, 20, 30")
        #expect(stats[0].example == "/r/1.json")
        #expect(
            sites.reportsRead == 2 && sites.reportsFilteredOut == 1 && sites.droppedCalls == 4
                && sites.omittedCallSites == 2)
    }

    @Test("the gate's blocking budgets: per call site and in total, offenders most blocked first")
    func budgets() {
        var collection = ReportCollection()
        collection.blockingCalls.filesFound = 1
        collection.blockingCalls.add(
            Self.report(at: 0, [Self.site("aa", [40, 40]), Self.site("bb", [30])]), path: "/r.json",
            filter: RecordFilter())
        let result = Gate(config: GateConfig(maxBlockingMsPerCallSite: 50, maxTotalBlockingMs: 200)).evaluate(
            collection)
        #expect(result.blockingChecks.map(\.kind) == [.maxBlockingMsPerCallSite, .maxTotalBlockingMs])
        #expect(
            !result.blockingChecks[0].passed && result.blockingChecks[0].actual == 80
                && result.blockingChecks[0].offenders.map(\.fingerprint) == ["aa"])
        #expect(result.blockingChecks[1].passed && result.blockingChecks[1].actual == 110)
        #expect(!result.passed)
        #expect(Gate(config: GateConfig(maxBlockingMsPerCallSite: 80)).evaluate(collection).passed)
    }

    @Test(
        "Reports/blocking-calls.schema.json names the model's keys, required exactly where the model always writes them"
    )
    func schemaMatchesModel() throws {
        // Every optional key set, so the encoded object names them all.
        var everyKey = Self.site("aa", [12])
        everyKey.asyncCallers = [.init(address: "0x20", symbol: "caller()", file: nil, line: nil)]
        everyKey.asyncCallersFromJobStart = true
        everyKey.asyncCallersReachRoot = false
        let encoded = try ReportCoding.makeEncoder(pretty: false).encode(Self.report(at: 0, [everyKey]))
        let object = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any])
        let schema = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: PackageRoot.url.appendingPathComponent("Reports/blocking-calls.schema.json")))
                as? [String: Any])
        let properties = try #require(schema["properties"] as? [String: Any])
        #expect(Set(properties.keys) == Set(object.keys))
        #expect(Set(schema["required"] as? [String] ?? []) == Set(object.keys).subtracting(["tags"]))
        let site = try #require((object["callSites"] as? [[String: Any]])?.first)
        let siteSchema = try #require((schema["$defs"] as? [String: Any])?["callSite"] as? [String: Any])
        #expect(Set((siteSchema["properties"] as? [String: Any] ?? [:]).keys) == Set(site.keys))
        #expect(
            Set(siteSchema["required"] as? [String] ?? [])
                == Set(site.keys).subtracting([
                    "callSite", "asyncCallers", "asyncCallersFromJobStart", "asyncCallersReachRoot",
                ]))
        #expect(BlockingCallsReport.read(path: "/nonexistent/blocking-x.json").failure != nil)
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
