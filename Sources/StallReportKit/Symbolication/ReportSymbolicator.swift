import Foundation

/// Offline symbolication of stall reports: fills in symbol, offset, file and line for frames that
/// lack them, from the images recorded in the reports (path, load bias, build ID).
///
/// All reports given are done together: the addresses of each image (across reports) are named by
/// one `llvm-symbolizer` run against the file ``SymbolFileLocator`` finds for it, and all new Swift
/// names are demangled by one `swift-demangle` run. Existing values are never overwritten: a frame
/// without a symbol gets symbol and offset; a frame without a file gets file and line.
///
/// When an app frame gets a name, or no frame of the report had a name before, the representative
/// stack, the representative async callers and the fingerprint are derived again from the samples
/// (`StallIdentity`, as the monitor derives them in process): the recorded fingerprint was made
/// without the app's names (a stripped binary, `symbolicateInProcess: false`), and the named one
/// groups the stall with the same stall from symbolicated runs, so `gate --baseline` across the
/// two passes. A report whose app frames all had names keeps its fingerprint (naming system
/// frames or adding file and line changes nothing the fingerprint is made of), so baselines and
/// suppressions keyed on it stay valid.
public struct ReportSymbolicator: Sendable {
    /// The result for one report.
    public struct Outcome: Sendable {
        /// The report with the frames filled in.
        public var report: StallReport
        /// Frames that got a symbol.
        public var named: Int
        /// Frames that got file and line.
        public var located: Int
        /// Frames still without a symbol.
        public var unnamed: Int
        /// The fingerprint before, when it was recomputed and changed.
        package var previousFingerprint: String?

        /// True when anything was filled in.
        package var changed: Bool { named > 0 || located > 0 }
    }

    /// The tools.
    package var tools: SymbolizerTools
    /// How image files are found.
    package var locator: SymbolFileLocator

    /// Creates a symbolicator.
    public init(tools: SymbolizerTools, locator: SymbolFileLocator) {
        self.tools = tools
        self.locator = locator
    }

    private struct ImageKey: Hashable {
        var path: String
        var buildID: String?
    }

    /// Symbolicates `reports`; `notes` are lines for people (images not found, tool failures).
    public func symbolicate(_ reports: [StallReport]) -> (outcomes: [Outcome], notes: [String]) {
        var notes: [String] = []
        // 1. Which link-time addresses of which image need a name.
        var wanted: [ImageKey: Set<UInt>] = [:]
        var images: [ImageKey: StallReport.Image] = [:]
        for report in reports {
            for frame in report.frames where Self.needsWork(frame) {
                guard let (key, image, address) = Self.linkAddress(frame, in: report) else { continue }
                wanted[key, default: []].insert(address)
                images[key] = image
            }
        }
        // 2. One symbolizer run per image found.
        let symbolizer = LLVMSymbolizer(executable: tools.symbolizer)
        var symbols: [ImageKey: [UInt: LLVMSymbolizer.Symbol]] = [:]
        for key in wanted.keys.sorted(by: { $0.path < $1.path }) {
            switch locator.locate(images[key]!) {
            case .failure(let error):
                // A virtual image the kernel maps (linux-vdso.so.1) has no file: nothing to say.
                if error.image.path.hasPrefix("/") { notes.append(error.description) }
            case .success(let match):
                do {
                    symbols[key] = try symbolizer.symbolize(path: match.path, addresses: wanted[key]!.sorted())
                } catch {
                    notes.append("\(match.path): \(error.description)")
                }
            }
        }
        // 3. One demangler run for every new name.
        var demangled: [String: String] = [:]
        let names = Set(symbols.values.flatMap { $0.values.compactMap(\.name) })
        if let demangler = tools.demangler {
            do {
                demangled = try SwiftDemangler(executable: demangler).demangle(names)
            } catch {
                notes.append("\(error.description); Swift names left mangled")
            }
        } else if names.contains(where: SwiftDemangler.isMangled) {
            notes.append("swift-demangle not found (looked next to swift and on PATH); Swift names left mangled")
        }
        // 4. Fill the frames in.
        let outcomes = reports.map { report in
            apply(to: report) { frame in
                guard let (key, _, address) = Self.linkAddress(frame, in: report) else { return nil }
                guard var symbol = symbols[key]?[address] else { return nil }
                symbol.name = symbol.name.map { demangled[$0] ?? $0 }
                return symbol
            }
        }
        return (outcomes, notes)
    }

    /// Whether a frame lacks a symbol or a source location.
    static func needsWork(_ frame: StallReport.Frame) -> Bool {
        frame.symbol?.isEmpty ?? true || frame.file == nil
    }

    /// The image and link-time address of a frame, when both are known.
    private static func linkAddress(
        _ frame: StallReport.Frame, in report: StallReport
    ) -> (ImageKey, StallReport.Image, UInt)? {
        guard let index = frame.image, report.images.indices.contains(index),
            let address = ReportCoding.parseAddress(frame.address)
        else { return nil }
        let image = report.images[index]
        guard let bias = ReportCoding.parseAddress(image.loadBias), address >= bias else { return nil }
        return (ImageKey(path: image.path, buildID: image.buildID?.lowercased()), image, address - bias)
    }

    /// Fills in the frames of one report from `lookup` and recomputes the fingerprint when due.
    func apply(to report: StallReport, lookup: (StallReport.Frame) -> LLVMSymbolizer.Symbol?) -> Outcome {
        var updated = report
        let hadNames = report.frames.contains { !($0.symbol?.isEmpty ?? true) }
        var named = 0
        var namedInApp = 0
        var located = 0
        for index in updated.frames.indices where Self.needsWork(updated.frames[index]) {
            guard let symbol = lookup(updated.frames[index]) else { continue }
            var frame = updated.frames[index]
            if frame.symbol?.isEmpty ?? true, let name = symbol.name {
                frame.symbol = name
                frame.offset = symbol.offset
                named += 1
                if frame.inApp { namedInApp += 1 }
            }
            if frame.file == nil, let file = symbol.file {
                frame.file = file
                frame.line = symbol.line
                located += 1
            }
            updated.frames[index] = frame
        }
        var previous: String?
        if namedInApp > 0 || (!hadNames && named > 0) {
            // Names the fingerprint is made of arrived: derive the identity again as the monitor
            // does in process with names (``StallIdentity``), so the stall gets the fingerprint
            // of a symbolicated run. Compact reports have no samples: they keep their stacks.
            let identity: StallIdentity
            if updated.samples.isEmpty {
                identity = StallIdentity(
                    stack: updated.representativeStack, syscall: nil, asyncCallers: updated.representativeAsyncCallers,
                    asyncCallersInJob: updated.representativeAsyncCallersInJob,
                    fingerprint: Fingerprint.of(
                        stack: updated.representativeStack, asyncCallers: updated.representativeAsyncCallers,
                        asyncCallersInJob: updated.representativeAsyncCallersInJob,
                        frames: updated.frames, classification: updated.classification,
                        syscall: nil, images: updated.images))
            } else {
                identity = StallIdentity.derive(
                    samples: updated.samples, frames: updated.frames, classification: updated.classification,
                    images: updated.images)
            }
            updated.representativeStack = identity.stack
            updated.representativeAsyncCallers = identity.asyncCallers
            updated.representativeAsyncCallersInJob = identity.asyncCallers == nil ? nil : identity.asyncCallersInJob
            if identity.fingerprint != updated.fingerprint {
                previous = updated.fingerprint
                updated.fingerprint = identity.fingerprint
            }
        }
        if named > 0 || located > 0 {
            var line =
                "stallreport symbolicate named \(named) and located \(located) frame\(named + located == 1 ? "" : "s") offline with llvm-symbolizer"
            if let previous { line += "; fingerprint was \(previous)" }
            updated.symbolication.note = [updated.symbolication.note, line].compactMap { $0 }.joined(separator: "; ")
            if updated.symbolication.symbolicator == "none" { updated.symbolication.symbolicator = "llvm-symbolizer" }
        }
        let unnamed = updated.frames.filter { $0.symbol?.isEmpty ?? true }.count
        return Outcome(report: updated, named: named, located: located, unnamed: unnamed, previousFingerprint: previous)
    }
}
