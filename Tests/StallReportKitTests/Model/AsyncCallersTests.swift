import Foundation
import StallReportKitTestSupport
import Testing

@testable import StallReportKit

/// Async call chains in the report model: the logical stack, the representative chain, the
/// fingerprint (two handlers that block in the same helper differ; reports without a chain keep
/// their fingerprint), the fast record reader and the budget-style nearest caller.
@Suite("async callers in reports")
struct AsyncCallersTests {
    /// A pool stall in `helper` (leaf app frame, called from the job's partial function
    /// `helperAsync`), awaited by `callers` (app functions, innermost first), then the runtime's
    /// completion function.
    static func report(callers: [String], jobFrames: Int? = nil) -> StallReport {
        var report = ReportFixtures.report(appSymbols: ["App.helper()", "App.helperAsync()"], durationMs: 400)
        var indices: [Int] = []
        var address: UInt = 0x5555_0000_9000
        for symbol in callers.map({ "(1) await resume partial function for \($0)" }) + [
            "completeTaskWithClosure(swift::AsyncContext*, swift::SwiftError*)"
        ] {
            let inApp = !symbol.hasPrefix("completeTask")
            indices.append(report.frames.count)
            report.frames.append(
                StallReport.Frame(
                    address: ReportCoding.formatAddress(address), image: inApp ? 0 : 2, symbol: symbol,
                    offset: 0, file: nil, line: nil, inApp: inApp))
            address += 0x100
        }
        for index in report.samples.indices {
            report.samples[index].asyncCallers = indices
            report.samples[index].asyncJobFrames = jobFrames
        }
        report.representativeAsyncCallers = RepresentativeAsyncCallers.find(
            samples: report.samples, frames: report.frames)
        report.fingerprint = Fingerprint.make(
            Fingerprint.components(
                stack: report.representativeStack.map { report.frames[$0] }, classification: report.classification,
                syscall: nil,
                asyncCallers: (report.representativeAsyncCallers ?? []).map { report.frames[$0] }))
        return report
    }

    @Test(
        "two handlers blocking in the same helper get different fingerprints; a report without a chain keeps its old one"
    )
    func fingerprints() {
        let show = Self.report(callers: ["App.UserController.show()", "App.handleRequest()"])
        let list = Self.report(callers: ["App.UserController.list()", "App.handleRequest()"])
        #expect(show.fingerprint != list.fingerprint)
        #expect(
            show.fingerprint == Self.report(callers: ["App.UserController.show()", "App.handleRequest()"]).fingerprint)
        let plain = ReportFixtures.report(appSymbols: ["App.helper()", "App.helperAsync()"], durationMs: 400)
        let old = Fingerprint.make(
            Fingerprint.components(
                stack: plain.representativeStack.map { plain.frames[$0] }, classification: plain.classification,
                syscall: nil))
        #expect(plain.fingerprint == old)
        #expect(show.fingerprint != plain.fingerprint)
        // Thunks between async functions do not count against the five app frames.
        let thunks = Self.report(callers: [
            "reabstraction thunk helper for A", "App.UserController.show()", "App.handleRequest()",
        ])
        #expect(thunks.fingerprint == show.fingerprint)
    }

    @Test("the logical stack is the job's frames, then the async callers")
    func logicalStack() throws {
        let report = Self.report(callers: ["App.UserController.show()", "App.handleRequest()"])
        let sample = try #require(report.samples.first)
        let names = sample.logicalFrames(in: report.frames).compactMap { report.frames[$0].symbol }
        // Without asyncJobFrames, the job ends at the outermost app frame: the run loop's frames go.
        #expect(
            names == [
                "__lll_lock_wait", "App.helper()", "App.helperAsync()",
                "(1) await resume partial function for App.UserController.show()",
                "(1) await resume partial function for App.handleRequest()",
                "completeTaskWithClosure(swift::AsyncContext*, swift::SwiftError*)",
            ])
        let known = Self.report(callers: ["App.handleRequest()"], jobFrames: 2)
        #expect(
            known.samples[0].logicalFrames(in: known.frames).compactMap { known.frames[$0].symbol }.prefix(3)
                == ["__lll_lock_wait", "App.helper()", "(1) await resume partial function for App.handleRequest()"])
        // A sample without a chain is its physical stack.
        var plain = sample
        plain.asyncCallers = nil
        #expect(plain.logicalFrames(in: report.frames) == plain.frames)
        #expect(report.nearestAppAsyncCaller == "(1) await resume partial function for App.UserController.show()")
        #expect(AsyncCallerNames.function(of: report.nearestAppAsyncCaller!) == "App.UserController.show()")
    }

    @Test("the representative chain is the one most samples carry, when at least half do")
    func representativeChain() {
        var report = Self.report(callers: ["App.a()", "App.b()"])
        let chain = report.samples[0].asyncCallers!
        #expect(RepresentativeAsyncCallers.find(samples: report.samples, frames: report.frames) == chain)
        for index in report.samples.indices where index % 3 == 0 {
            report.samples[index].asyncCallers = Array(chain.dropFirst())
        }
        #expect(RepresentativeAsyncCallers.find(samples: report.samples, frames: report.frames) == chain)
        for index in report.samples.indices { report.samples[index].asyncCallers = nil }
        #expect(RepresentativeAsyncCallers.find(samples: report.samples, frames: report.frames) == nil)
    }

    @Test("reports round-trip the chain; the fast record reader gives the full decoder's record with its app callers")
    func coding() throws {
        let report = Self.report(callers: ["App.UserController.show()", "App.handleRequest()"])
        let data = try report.encoded()
        guard case .success(let decoded) = ReportLoader().load(data: data) else {
            Issue.record("not decoded")
            return
        }
        #expect(decoded == report)
        let full = StallRecord(report: decoded, path: "/r.json")
        #expect(
            full.asyncCallers.map(\.symbol) == [
                "(1) await resume partial function for App.UserController.show()",
                "(1) await resume partial function for App.handleRequest()",
            ])
        var extractor = FastRecordExtractor(depthLimit: ReportLoader().maxNestingDepth)
        let fast = try data.withUnsafeBytes { bytes in try extractor.record(from: bytes, path: "/r.json") }
        #expect(fast == full)
        // An older report (no chain) reads as before.
        let plain = ReportFixtures.report(appSymbols: ["App.helper()"], durationMs: 400)
        let plainData = try plain.encoded()
        let plainFast = try plainData.withUnsafeBytes { bytes in try extractor.record(from: bytes, path: "/p.json") }
        #expect(plainFast.asyncCallers.isEmpty)
        #expect(plainFast == StallRecord(report: plain, path: "/p.json"))
    }
}
