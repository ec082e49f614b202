import Foundation
import StallReportModel

extension PprofProfileBuilder {
    /// The profile of blocking-calls reports (in the order given): one sample per call site and
    /// report, valued `calls`/`count` (the calls made) and `blocked`/`nanoseconds` (the time they
    /// blocked; the default type and the `period_type`, `period` 1 ns). Its locations are the
    /// site's logical stack (``BlockingCallStacks/logicalFrames(of:)``) under a synthetic leaf
    /// `[blocking <call>]`; frames carry their address and, where the report named them, a line
    /// (a blocking-calls report keeps no image table: no mappings). Labels: `call`, `loop`,
    /// `fingerprint`, `call_site` (when named), `pid`, `report_id`, and `max_blocked` (the longest
    /// call, in nanoseconds). `time_nanos` is the first report's start, `duration_nanos` the time
    /// to the last one's end.
    mutating func build(blockingCalls reports: [BlockingCallsReport], comment: String?) -> PprofProfile {
        setValueTypes(count: "calls", weight: "blocked")
        profile.period = 1
        let keys = (
            call: string("call"), loop: string("loop"), fingerprint: string("fingerprint"),
            callSite: string("call_site"), pid: string("pid"), reportID: string("report_id"),
            maxBlocked: string("max_blocked"), nanoseconds: string("nanoseconds")
        )
        for report in reports {
            for site in report.callSites {
                var ids = [syntheticLocation(BlockingCallStacks.leafFrame(of: site).name)]
                for frame in BlockingCallStacks.logicalFrames(of: site) {
                    let address = ReportCoding.parseAddress(frame.address).map(UInt64.init) ?? 0
                    ids.append(
                        location(
                            address: address, mappingID: 0, symbol: frame.symbol, file: frame.file, line: frame.line))
                }
                var labels: [PprofProfile.Label] = [
                    .init(key: keys.call, str: string(site.call)),
                    .init(key: keys.loop, str: string(site.loopKind)),
                    .init(key: keys.fingerprint, str: string(site.fingerprint)),
                    .init(key: keys.pid, num: Int64(report.process.pid)),
                    .init(key: keys.reportID, str: string(report.id)),
                    .init(key: keys.maxBlocked, num: Self.nanoseconds(site.maxMs), numUnit: keys.nanoseconds),
                ]
                if let callSite = site.callSite { labels.append(.init(key: keys.callSite, str: string(callSite))) }
                profile.append(
                    .init(
                        locationIDs: ids, values: [Int64(max(0, site.count)), Self.nanoseconds(site.totalMs)],
                        labels: labels))
            }
        }
        return finish(spans: reports.map { ($0.startedAt, $0.intervalMs) }, comment: comment)
    }
}
