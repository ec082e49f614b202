import Foundation
import StallMonitorTesting
import StallReportKitTestSupport
import Testing

@testable import StallBudgetCore

/// The failure message of a stall in async code names the nearest app function that awaited it.
@Suite struct StallBudgetMessageTests {
    static func report(callers: [String]) -> StallReport {
        var frames = [
            StallReport.Frame(
                address: "0x1000", image: 0, symbol: "App.helper()", offset: 4, file: nil, line: nil, inApp: true),
            StallReport.Frame(
                address: "0x2000", image: 1, symbol: "swift_job_run", offset: 4, file: nil, line: nil, inApp: false),
        ]
        var chain: [Int] = []
        for symbol in callers {
            chain.append(frames.count)
            frames.append(
                StallReport.Frame(
                    address: "0x\(3000 + frames.count)", image: 0, symbol: symbol, offset: 0, file: nil, line: nil,
                    inApp: true))
        }
        return ReportFixtures.poolStall(
            durationMs: 402, thresholdMs: 100, threadName: "oot.default-qos", frames: frames,
            representativeStack: [0, 1], representativeAsyncCallers: chain.isEmpty ? nil : chain)
    }

    @Test(
        "the nearest app async caller (thunks skipped) follows the stalling function; without a chain the message is as before"
    )
    func nearestCaller() {
        let url = URL(fileURLWithPath: "/tmp/r.json")
        let async = StallBudgetViolation(
            report: Self.report(callers: [
                "(1) await resume partial function for reabstraction thunk helper for A",
                "(2) await resume partial function for App.UserController.show()",
            ]),
            reportURL: url, budget: .milliseconds(100), startedIntoTestMs: 12)
        #expect(
            async.message.contains(
                "stall budget in App.helper(), awaited by App.UserController.show() (concurrencyPool"),
            "\(async.message)")
        let plain = StallBudgetViolation(
            report: Self.report(callers: []), reportURL: url, budget: .milliseconds(100), startedIntoTestMs: 12)
        #expect(plain.message.contains("stall budget in App.helper() (concurrencyPool"), "\(plain.message)")
        #expect(!plain.message.contains("awaited by"))
    }
}
