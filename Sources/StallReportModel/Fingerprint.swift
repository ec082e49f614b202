import Foundation

/// The stable identity of a stall: a hash of the top in-app frames of its representative stack.
///
/// Only symbol names go in (never addresses, offsets or durations), so the same stall in two
/// builds or two runs gets the same fingerprint. Version 1 is FNV-1a 64 over
/// `"v1"` followed by each input joined with a newline, written as 16 lowercase hex digits.
public enum Fingerprint {
    /// How many in-app frames, from the leaf, go into the fingerprint.
    public static let appFrameCount = 5

    /// Names that stand for linker-made code, not a function of the app: PLT stubs are named
    /// after the nearest symbol before them (`_init`) by some symbolizers and not at all by others.
    public static func isLinkerStub(_ symbol: String) -> Bool {
        symbol == "_init" || symbol == "_fini" || symbol.hasSuffix("@plt")
    }

    /// Names of a sanitizer runtime (ThreadSanitizer, AddressSanitizer, …) linked into an
    /// instrumented build: where a sample lands inside the instrumentation varies from run to run
    /// and says nothing about the stall.
    public static func isSanitizerRuntime(_ symbol: String) -> Bool {
        sanitizerPrefixes.contains { symbol.hasPrefix($0) }
    }

    private static let sanitizerPrefixes = [
        "__tsan", "__asan", "__lsan", "__msan", "__ubsan", "__hwasan", "__sanitizer",
        "__interception", "__interceptor_", "___interceptor_",
    ]

    /// Whether a frame named `symbol` is left out of the fingerprint: linker stubs and sanitizer
    /// runtime code.
    public static func isIgnored(_ symbol: String) -> Bool {
        isLinkerStub(symbol) || isSanitizerRuntime(symbol)
    }

    /// The fingerprint of the given ordered components (symbol names, leaf first, or fallback keys).
    public static func make(_ components: [String]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        for byte in "v1".utf8 { mix(byte) }
        for component in components {
            mix(0x0a)
            for byte in component.utf8 { mix(byte) }
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The components of a report's fingerprint: the symbols of the top in-app frames of the
    /// representative stack; without in-app frames, the top named frames; without any stack, the
    /// classification and syscall so that stack-less stalls of one kind still group together.
    ///
    /// A report written without symbolication (`symbolicateInProcess: false`, or the first
    /// version of an `inProgress` report) has no names: given `images`, its in-app frames stand in
    /// as `<image file>+0x<offset in image>`, stable for one build; `stallreport symbolicate`
    /// recomputes the fingerprint from names later.
    ///
    /// Names go in as ``FingerprintName`` gives them: an optimizer's clone of a function, a
    /// partial function or a forwarder as the function, thunks and the `@main` entry not at all,
    /// so a debug and a release build of the same code agree.
    ///
    /// Frames of the monitor's own code (``StallReport/Frame/monitor``) never count: an
    /// interposer's frame is in a debug build's stack and may be gone by tail call in release.
    ///
    /// Given the representative async callers (``StallReport/representativeAsyncCallers``), their
    /// in-app frames follow, after `async`, named like the stack's: two handlers that block in the
    /// same helper differ. Reports without async callers keep the fingerprint they always had.
    public static func components(
        stack: [StallReport.Frame], classification: StallClassification, syscall: String?,
        images: [StallReport.Image] = [],
        asyncCallers: [StallReport.Frame] = []
    ) -> [String] {
        let base = stackComponents(
            stack: stack.filter { !$0.isMonitorCode }, classification: classification, syscall: syscall, images: images)
        let callers = appComponents(
            asyncCallers.filter { !$0.isMonitorCode && !($0.symbol.map(AsyncCallerNames.isThunk) ?? false) },
            images: images)
        return callers.isEmpty ? base : base + ["async"] + callers
    }

    /// The in-app frames of `frames` (at most ``appFrameCount``): by name, or unnamed as
    /// `<image file>+0x<offset>` when none is named.
    private static func appComponents(_ frames: [StallReport.Frame], images: [StallReport.Image]) -> [String] {
        let named = frames.filter(\.inApp).compactMap { frame -> String? in
            guard let symbol = frame.symbol, !symbol.isEmpty, !isIgnored(symbol) else { return nil }
            return FingerprintName.of(symbol)
        }
        if !named.isEmpty { return Array(FingerprintName.collapsed(named).prefix(appFrameCount)) }
        return unnamedApp(frames, images: images)
    }

    private static func unnamedApp(_ frames: [StallReport.Frame], images: [StallReport.Image]) -> [String] {
        frames.filter(\.inApp).prefix(appFrameCount).compactMap { frame -> String? in
            guard let index = frame.image, images.indices.contains(index),
                let address = ReportCoding.parseAddress(frame.address),
                let bias = ReportCoding.parseAddress(images[index].loadBias), address >= bias
            else { return nil }
            let file = images[index].path.split(separator: "/").last.map(String.init) ?? images[index].path
            return "\(file)+\(ReportCoding.formatAddress(address - bias))"
        }
    }

    private static func stackComponents(
        stack: [StallReport.Frame], classification: StallClassification, syscall: String?, images: [StallReport.Image]
    ) -> [String] {
        let named = stack.compactMap { frame -> (String, Bool)? in
            guard let symbol = frame.symbol, !symbol.isEmpty, !isIgnored(symbol), let name = FingerprintName.of(symbol)
            else { return nil }
            return (name, frame.inApp)
        }
        let app = FingerprintName.collapsed(named.filter { $0.1 }.map { $0.0 }).prefix(appFrameCount)
        if !app.isEmpty { return ["app"] + app }
        let system = FingerprintName.collapsed(named.map { $0.0 }).prefix(appFrameCount)
        if !system.isEmpty { return ["system"] + system }
        let unnamed = unnamedApp(stack, images: images)
        if !unnamed.isEmpty { return ["unsymbolicated"] + unnamed }
        return ["nostack", classification.rawValue, syscall ?? "-"]
    }
}
