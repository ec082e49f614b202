import Foundation

/// Demangles many Swift symbol names with one run of the toolchain's `swift-demangle`.
///
/// Uses `--no-sugar`, which prints `Swift.Array<T>` and `Swift.Optional<T>` the way the Swift
/// runtime's `swift_demangle` (the in-process symbolicator) does. Names that are not Swift names
/// come back unchanged.
package struct SwiftDemangler: Sendable {
    /// Path of `swift-demangle`.
    package var executable: String

    /// Creates a demangler that runs `executable`.
    package init(executable: String) {
        self.executable = executable
    }

    /// Whether `name` looks like a mangled Swift name.
    package static func isMangled(_ name: String) -> Bool {
        ["$s", "$S", "_$s", "_$S", "_T0", "$e", "_$e"].contains { name.hasPrefix($0) }
    }

    /// Demangled form of each name; names it could not demangle map to themselves.
    package func demangle(_ names: Set<String>) throws(ToolRunner.Failure) -> [String: String] {
        let mangled = names.filter { Self.isMangled($0) && !$0.contains("\n") }.sorted()
        guard !mangled.isEmpty else { return [:] }
        let output = try ToolRunner.run(executable, ["--no-sugar"], input: mangled.joined(separator: "\n") + "\n")
        var lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        guard lines.count == mangled.count else {
            throw ToolRunner.Failure(
                description: "swift-demangle printed \(lines.count) lines for \(mangled.count) names")
        }
        return Dictionary(
            uniqueKeysWithValues: zip(mangled, lines.map { $0.isEmpty ? nil : $0 }).map { ($0, $1 ?? $0) })
    }
}
