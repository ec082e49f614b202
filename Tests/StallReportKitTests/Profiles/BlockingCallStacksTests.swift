import Foundation
import StallReportModel
import Testing

@testable import StallReportKit

/// Blocking-call sites as weighted stacks for the exports: root first, the async callers before
/// the job's frames, the runtime's job runner cut away only where async callers stand for it.
@Suite("Blocking call stacks")
struct BlockingCallStacksTests {
    static func frame(_ symbol: String?, _ address: String = "0x10") -> BlockingCallsReport.Frame {
        .init(address: address, symbol: symbol, file: nil, line: nil)
    }

    static let jobStack = [
        frame("handler()"), frame("swift::runJobInEstablishedExecutorContext(swift::Job*)"), frame("swift_job_run"),
        frame("_dispatch_worker_thread"), frame("start_thread"),
    ]

    static func site(
        _ fingerprint: String, totalMs: Double, stack: [BlockingCallsReport.Frame],
        asyncCallers: [BlockingCallsReport.Frame]?
    ) -> BlockingCallsReport.CallSite {
        BlockingCallsReport.CallSite(
            call: "usleep", loopKind: "concurrencyPool", fingerprint: fingerprint, callSite: "handler()", count: 2,
            totalMs: totalMs, maxMs: totalMs / 2, durationsMs: [totalMs / 2, totalMs / 2], threads: [1], stack: stack,
            asyncCallers: asyncCallers)
    }

    @Test("async callers, outermost first, then the job's frames without the runtime's, then the call")
    func stackWithAsyncCallers() {
        let site = Self.site(
            "aa", totalMs: 30, stack: Self.jobStack,
            asyncCallers: [Self.frame("route()"), Self.frame("completeTaskWithClosure")])
        #expect(
            BlockingCallStacks.stack(of: site).map(\.name) == [
                "completeTaskWithClosure", "route()", "handler()", "[blocking usleep]",
            ])
    }

    @Test("without async callers the whole stack is kept, a frame without a symbol named by its address")
    func stackWithoutAsyncCallers() {
        let site = Self.site(
            "bb", totalMs: 10, stack: [Self.frame("work()"), Self.frame(nil, "0xabc"), Self.frame("start_thread")],
            asyncCallers: nil)
        let stack = BlockingCallStacks.stack(of: site)
        #expect(stack.map(\.name) == ["start_thread", "0xabc", "work()", "[blocking usleep]"])
        #expect(stack.map(\.inApp) == [false, false, true, false])
    }

    @Test("each call site weighs its blocked time; a fingerprint filter keeps only its sites; folded in microseconds")
    func weightsAndFilter() {
        let report = BlockingCallsReport(
            id: "r", startedAt: Date(timeIntervalSince1970: 1_800_000_000), intervalMs: 1000, thresholdMs: 5,
            process: BlockingCallSitesTests.process,
            callSites: [
                Self.site("aa", totalMs: 30, stack: Self.jobStack, asyncCallers: [Self.frame("route()")]),
                Self.site("bb", totalMs: 10, stack: [Self.frame("work()")], asyncCallers: nil),
            ], omittedCallSites: 0, droppedCalls: 0, tags: nil)
        let all = BlockingCallStacks.stacks(of: [report])
        #expect(all.sampleCount == 2)
        #expect((0..<all.sampleCount).map(all.weight(of:)) == [30, 10])
        let one = BlockingCallStacks.stacks(of: [report], fingerprints: ["bb"])
        #expect(one.sampleCount == 1)
        let folded = String(decoding: FoldedExport.render(one), as: UTF8.self)
        #expect(folded == "work();[blocking usleep] 10000\n")
    }
}
