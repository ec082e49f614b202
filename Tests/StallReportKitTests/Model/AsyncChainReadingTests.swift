import Foundation
import StallReportKitTestSupport
import StallReportModel
import Testing

/// One chain however it was read: a sample's async callers read from the running frame hold every
/// function entered in the stalled job, read from the job start only the one the job started in;
/// the stall's identity counts the callers past them, the same either way.
@Suite("async callers: one identity whichever way each sample's chain was read")
struct AsyncChainReadingTests {
    /// Functions, innermost first: the route entered in the job, the responder the job started
    /// in, then two that awaited before the job (the connection's loop and the server's child
    /// task), then the runtime's completion function.
    static let entered = ["App.route()", "App.Responder.respond()"]
    static let before = ["App.Connection.serve()", "App.Server.child()"]

    /// A stall in `App.helper()` whose samples read their chains as `ways` says (true: from the
    /// running frame, false: from the job start).
    static func report(_ ways: [Bool]) -> StallReport {
        var report = ReportFixtures.report(appSymbols: ["App.helper()", "App.helperAsync()"], durationMs: 400)
        var index: [String: Int] = [:]
        var address: UInt = 0x5555_0000_9000
        func frame(_ symbol: String) -> Int {
            if let known = index[symbol] { return known }
            let inApp = !symbol.hasPrefix("completeTask")
            report.frames.append(
                StallReport.Frame(
                    address: ReportCoding.formatAddress(address), image: inApp ? 0 : 2, symbol: symbol,
                    offset: 0, file: nil, line: nil, inApp: inApp))
            address += 0x100
            index[symbol] = report.frames.count - 1
            return report.frames.count - 1
        }
        let resume = { (name: String) in "(1) await resume partial function for \(name)" }
        let running = (Self.entered + Self.before).map { frame(resume($0)) } + [frame("completeTaskWithClosure")]
        let fromStart =
            [frame("(2) suspend resume partial function for App.Responder.respond()")]
            + Self.before.map { frame(resume($0)) } + [frame("completeTaskWithClosure")]
        for sample in report.samples.indices {
            let way = ways[sample % ways.count]
            report.samples[sample].asyncCallers = way ? running : fromStart
            report.samples[sample].asyncJobCallers = way ? Self.entered.count : 1
            report.samples[sample].asyncCallersFromJobStart = way ? nil : true
        }
        let identity = StallIdentity.derive(
            samples: report.samples, frames: report.frames, classification: report.classification,
            images: report.images)
        report.representativeAsyncCallers = identity.asyncCallers
        report.representativeAsyncCallersInJob = identity.asyncCallersInJob
        report.fingerprint = identity.fingerprint
        return report
    }

    @Test("running-frame, job-start and mixed reads give one fingerprint; the running read's whole chain is shown")
    func oneIdentity() throws {
        let running = Self.report([true])
        let fromStart = Self.report([false])
        let mixed = Self.report([true, false])
        let mostlyStart = Self.report([false, false, true])
        #expect(running.fingerprint == fromStart.fingerprint)
        #expect(mixed.fingerprint == running.fingerprint)
        #expect(mostlyStart.fingerprint == running.fingerprint)
        // The callers that awaited before the job count: a different connection loop differs.
        var other = Self.report([true])
        let serve = try #require(other.frames.firstIndex { $0.symbol?.contains("Connection.serve") == true })
        other.frames[serve].symbol = "(1) await resume partial function for App.OtherConnection.serve()"
        let identity = StallIdentity.derive(
            samples: other.samples, frames: other.frames, classification: other.classification, images: other.images)
        #expect(identity.fingerprint != running.fingerprint)
        // Of the agreeing samples, one read from the running frame stands for them: the whole chain.
        let shown = (mixed.representativeAsyncCallers ?? []).compactMap { mixed.frames[$0].symbol }
        #expect(shown.first == "(1) await resume partial function for App.route()", "\(shown)")
        #expect(mixed.representativeAsyncCallersInJob == Self.entered.count)
        #expect(fromStart.representativeAsyncCallersInJob == 1)
        // The fingerprint recomputed from the stored chain (a compact report has no samples) agrees.
        for report in [running, fromStart, mixed] {
            let stored = Fingerprint.of(
                stack: report.representativeStack, asyncCallers: report.representativeAsyncCallers,
                asyncCallersInJob: report.representativeAsyncCallersInJob, frames: report.frames,
                classification: report.classification, syscall: nil, images: report.images)
            #expect(stored == report.fingerprint)
        }
    }

    @Test("a report written before asyncJobCallers keeps counting its whole chain")
    func olderReports() {
        var report = Self.report([true])
        for sample in report.samples.indices { report.samples[sample].asyncJobCallers = nil }
        let identity = StallIdentity.derive(
            samples: report.samples, frames: report.frames, classification: report.classification, images: report.images
        )
        #expect(identity.asyncCallersInJob == nil)
        #expect(identity.fingerprint != Self.report([true]).fingerprint, "the callers entered in the job count again")
    }
}
