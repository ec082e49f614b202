import Foundation

/// Finds the external programs offline symbolication uses: `llvm-symbolizer` and `swift-demangle`.
///
/// Each is looked for, in order: an explicit path; next to the `swift` found on `PATH` (symbolic
/// links resolved: the toolchain's `usr/bin`, whose `llvm-symbolizer` knows the toolchain's DWARF);
/// then on `PATH` itself.
public struct SymbolizerTools: Sendable, Equatable {
    /// Path of `llvm-symbolizer`.
    package var symbolizer: String
    /// Path of `swift-demangle`, when found (without it Swift names stay mangled).
    package var demangler: String?

    /// Creates a tool set from known paths.
    public init(symbolizer: String, demangler: String?) {
        self.symbolizer = symbolizer
        self.demangler = demangler
    }

    /// Finds the tools; nil when no `llvm-symbolizer` is found.
    public static func find(
        symbolizer explicit: String? = nil, demangler explicitDemangler: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> SymbolizerTools? {
        let path = environment["PATH"] ?? ""
        guard let symbolizer = explicit ?? locate("llvm-symbolizer", path: path) else { return nil }
        return SymbolizerTools(
            symbolizer: symbolizer, demangler: explicitDemangler ?? locate("swift-demangle", path: path))
    }

    /// `name` next to the toolchain's `swift`, else on `path`.
    package static func locate(_ name: String, path: String) -> String? {
        let directories = path.split(separator: ":").map(String.init).filter { !$0.isEmpty }
        let manager = FileManager.default
        for directory in directories {
            let swift = (directory as NSString).appendingPathComponent("swift")
            guard manager.isExecutableFile(atPath: swift) else { continue }
            let real = URL(fileURLWithPath: swift).resolvingSymlinksInPath().deletingLastPathComponent()
            let candidate = real.appendingPathComponent(name).path
            if manager.isExecutableFile(atPath: candidate) { return candidate }
            break
        }
        for directory in directories {
            let candidate = (directory as NSString).appendingPathComponent(name)
            if manager.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
