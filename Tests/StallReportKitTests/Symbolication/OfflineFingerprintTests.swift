import Foundation
import StallReportKitTestSupport
import Testing

@testable import StallReportKit

/// Offline symbolication gives a stall the fingerprint the monitor gives it when it names the
/// frames in process: for a stripped binary (system frames named in process, the app's not) and
/// for `symbolicateInProcess: false` (no names at all), async callers included.
@Suite("Offline fingerprints")
struct OfflineFingerprintTests {
    /// A report as the monitor writes it with every name: three app frames on the stack, two
    /// app async callers, and a leaf whose address differs in every sample (a spinning loop).
    static func namedInProcess() -> StallReport {
        var report = ReportFixtures.report(appSymbols: ["App.spin()", "App.work()", "App.handle()"], durationMs: 600)
        let callers = ["App.caller(request:)", "App.serve()"].map { name -> Int in
            report.frames.append(
                .init(
                    address: ReportCoding.formatAddress(0x5555_0000_9000 + UInt(report.frames.count) * 0x40), image: 0,
                    symbol: name, offset: 0, file: ReportFixtures.appFile, line: 90, inApp: true))
            return report.frames.count - 1
        }
        let stack = report.samples[0].frames
        for index in report.samples.indices {
            // Each sample's leaf is another address of the same app function.
            let leaf = report.frames[stack[1]]
            report.frames.append(
                .init(
                    address: ReportCoding.formatAddress(0x5555_0000_5000 + UInt(index) * 8), image: 0,
                    symbol: leaf.symbol, offset: 8 * index, file: leaf.file, line: leaf.line, inApp: true))
            report.samples[index].frames = [stack[0], report.frames.count - 1] + stack.dropFirst(2)
            report.samples[index].asyncCallers = callers
        }
        return stamped(report)
    }

    /// `report` with the representative stack, async callers and fingerprint the monitor derives.
    static func stamped(_ report: StallReport) -> StallReport {
        var report = report
        let identity = StallIdentity.derive(
            samples: report.samples, frames: report.frames, classification: report.classification, images: report.images
        )
        report.representativeStack = identity.stack
        report.representativeAsyncCallers = identity.asyncCallers
        report.fingerprint = identity.fingerprint
        return report
    }

    /// `report` with the names (symbol, offset, file, line) of the frames `which` selects removed,
    /// stamped as the monitor stamps a report written with what was left.
    static func withoutNames(_ report: StallReport, where which: (StallReport.Frame) -> Bool) -> StallReport {
        var copy = report
        for index in copy.frames.indices where which(copy.frames[index]) {
            copy.frames[index].symbol = nil
            copy.frames[index].offset = nil
            copy.frames[index].file = nil
            copy.frames[index].line = nil
        }
        return stamped(copy)
    }

    /// Names each frame as `named` names the frame at the same address.
    static func lookup(from named: StallReport) -> (StallReport.Frame) -> LLVMSymbolizer.Symbol? {
        let byAddress = Dictionary(named.frames.map { ($0.address, $0) }, uniquingKeysWith: { first, _ in first })
        return { frame in
            guard let source = byAddress[frame.address], let name = source.symbol else { return nil }
            return .init(name: name, offset: source.offset, file: source.file, line: source.line)
        }
    }

    static let symbolicator = ReportSymbolicator(
        tools: SymbolizerTools(symbolizer: "/bin/false", demangler: nil),
        locator: SymbolFileLocator(debugDirectories: []))

    @Test(
        "A stripped binary's report (system frames named, app frames not) gets the in-process fingerprint, async callers included"
    )
    func strippedBinary() throws {
        let named = Self.namedInProcess()
        let callers = try #require(named.representativeAsyncCallers)
        #expect(callers.count == 2, "the fixture's async callers are in its identity")
        let withoutCallers = Fingerprint.of(
            stack: named.representativeStack, asyncCallers: nil, frames: named.frames,
            classification: named.classification, syscall: nil, images: named.images)
        #expect(withoutCallers != named.fingerprint, "the async callers are part of the fingerprint")

        let stripped = Self.withoutNames(named) { $0.inApp }
        #expect(stripped.frames.contains { $0.symbol != nil }, "system frames keep their names")
        #expect(stripped.fingerprint != named.fingerprint)
        let outcome = Self.symbolicator.apply(to: stripped, lookup: Self.lookup(from: named))
        #expect(outcome.report.fingerprint == named.fingerprint)
        #expect(outcome.previousFingerprint == stripped.fingerprint)
        #expect(outcome.report.representativeAsyncCallers == named.representativeAsyncCallers)
        #expect(
            outcome.report.representativeStack.map { outcome.report.frames[$0].symbol }
                == named.representativeStack.map { named.frames[$0].symbol })
    }

    @Test("A report written without names (symbolicateInProcess: false) gets the in-process fingerprint")
    func noNamesInProcess() {
        let named = Self.namedInProcess()
        let nameless = Self.withoutNames(named) { _ in true }
        #expect(nameless.frames.allSatisfy { $0.symbol == nil })
        #expect(nameless.fingerprint != named.fingerprint)
        let outcome = Self.symbolicator.apply(to: nameless, lookup: Self.lookup(from: named))
        #expect(outcome.report.fingerprint == named.fingerprint)
        #expect(outcome.report.representativeAsyncCallers == named.representativeAsyncCallers)
    }

    @Test("Naming only system frames, or only adding file and line, keeps the fingerprint")
    func systemNamesKeepIt() {
        let named = Self.namedInProcess()
        let systemUnnamed = Self.withoutNames(named) { !$0.inApp }
        let outcome = Self.symbolicator.apply(to: systemUnnamed, lookup: Self.lookup(from: named))
        #expect(outcome.named > 0)
        #expect(outcome.report.fingerprint == systemUnnamed.fingerprint)
        #expect(outcome.report.representativeStack == systemUnnamed.representativeStack)
        #expect(outcome.previousFingerprint == nil)
    }

    @Test("A compact report (no samples) keeps its stacks and gets the fingerprint of their names")
    func compactReport() {
        let named = Self.namedInProcess()
        var compact = Self.withoutNames(named) { $0.inApp }
        let strippedFingerprint = compact.fingerprint
        compact.samples = []
        let outcome = Self.symbolicator.apply(to: compact, lookup: Self.lookup(from: named))
        #expect(outcome.report.representativeStack == compact.representativeStack)
        #expect(outcome.report.representativeAsyncCallers == compact.representativeAsyncCallers)
        let expected = Fingerprint.of(
            stack: compact.representativeStack, asyncCallers: compact.representativeAsyncCallers,
            frames: outcome.report.frames, classification: compact.classification, syscall: nil, images: compact.images)
        #expect(outcome.report.fingerprint == expected)
        #expect(outcome.report.fingerprint != strippedFingerprint)
    }
}
