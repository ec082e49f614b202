import Foundation
import StallReportModel
import Testing

@testable import StallReportKit

/// The pprof profile of blocking-calls reports (`export --format pprof --blocking-calls`): one
/// sample per call site, valued in calls and in nanoseconds blocked, its logical stack under the
/// `[blocking …]` leaf.
@Suite("pprof export of blocking calls")
struct PprofBlockingCallsTests {
    static func decode(_ reports: [BlockingCallsReport]) throws -> DecodedPprof {
        var builder = PprofProfileBuilder(layouts: { _ in nil })
        var profile = builder.build(blockingCalls: reports, comment: "blocking")
        return try DecodedPprof(profile.encoded())
    }

    static let reports: [BlockingCallsReport] = {
        let frame = BlockingCallStacksTests.frame
        var withCallers = BlockingCallStacksTests.site(
            "aa", totalMs: 30, stack: BlockingCallStacksTests.jobStack,
            asyncCallers: [frame("route()", "0x20"), frame("completeTaskWithClosure", "0x30")])
        withCallers.stack[0].address = "0x40"
        var plain = BlockingCallStacksTests.site(
            "bb", totalMs: 12.5, stack: [frame("work()", "0x50"), frame(nil, "0x60")], asyncCallers: nil)
        plain.call = "pthread_mutex_lock"
        plain.loopKind = "nioEventLoop"
        plain.callSite = nil
        plain.count = 5
        let first = BlockingCallsReport(
            id: "r1", startedAt: Date(timeIntervalSince1970: 1_800_000_000), intervalMs: 1000, thresholdMs: 5,
            process: BlockingCallSitesTests.process, callSites: [withCallers], omittedCallSites: 0, droppedCalls: 0,
            tags: nil)
        let second = BlockingCallsReport(
            id: "r2", startedAt: Date(timeIntervalSince1970: 1_800_000_010), intervalMs: 2000, thresholdMs: 5,
            process: BlockingCallSitesTests.process, callSites: [plain], omittedCallSites: 0, droppedCalls: 0,
            tags: nil)
        return [first, second]
    }()

    @Test("value types calls/count and blocked/nanoseconds (the default), times from the reports' intervals")
    func header() throws {
        let profile = try Self.decode(Self.reports)
        #expect(profile.sampleTypes.map { "\($0.type)/\($0.unit)" } == ["calls/count", "blocked/nanoseconds"])
        #expect(profile.defaultSampleType == "blocked")
        #expect(profile.periodType.map { "\($0.type)/\($0.unit)" } == "blocked/nanoseconds")
        #expect(profile.timeNanos == 1_800_000_000 * 1_000_000_000)
        #expect(profile.durationNanos == 12_000_000_000)  // the second report starts 10 s later, lasts 2 s
        #expect(profile.comments == ["blocking"])
        #expect(profile.mappings.isEmpty)
    }

    @Test("one sample per site: its calls and blocked time, its labels, its logical stack leaf first")
    func samples() throws {
        let profile = try Self.decode(Self.reports)
        try #require(profile.samples.count == 2)
        let (first, second) = (profile.samples[0], profile.samples[1])
        #expect(first.values == [2, 30_000_000] && second.values == [5, 12_500_000])
        #expect(first.string("call") == "usleep" && second.string("call") == "pthread_mutex_lock")
        #expect(first.string("loop") == "concurrencyPool" && second.string("loop") == "nioEventLoop")
        #expect(first.string("fingerprint") == "aa" && first.string("call_site") == "handler()")
        #expect(second.string("call_site") == nil)
        #expect(first.string("report_id") == "r1" && first.number("pid") == 7)
        #expect(first.number("max_blocked") == 15_000_000)
        // The job's frames give way to the async callers; the unnamed frame keeps its address.
        #expect(
            first.locationIDs.map { profile.functionName(ofLocation: $0) } == [
                "[blocking usleep]", "handler()", "route()", "completeTaskWithClosure",
            ])
        #expect(
            first.locationIDs.dropFirst().map { id in profile.locations.first { $0.id == id }?.address } == [
                0x40, 0x20, 0x30,
            ])
        #expect(
            second.locationIDs.map { profile.functionName(ofLocation: $0) } == [
                "[blocking pthread_mutex_lock]", "work()", nil,
            ])
        #expect(profile.locations.first { $0.id == second.locationIDs[2] }?.address == 0x60)
    }
}
