import Foundation
import StallReportKitTestSupport
import Testing

/// StallReportKit's public declarations are what programs outside the package call (issue 32):
/// the package's own targets use `package` access. A public declaration is a line of a `.swift`
/// file under `Sources/StallReportKit` that starts, after spaces and any `@attribute `s, with
/// `public ` or `open ` (the rule of `grep -rE '^\s*(@[a-zA-Z]+ )*(public|open) '`).
@Suite("StallReportKit's public surface stays small and documented")
struct PublicSurfaceTests {
    /// The most public declarations StallReportKit may have.
    static let limit = 250
    /// A line that declares something public.
    static var declaration: Regex<(Substring, Substring?, Substring)> { #/^\s*(@[a-zA-Z]+ )*(public|open) /# }

    /// Every public declaration of the module's sources, as `path:line` and whether a `///` doc
    /// comment comes right before it (attribute lines in between are allowed).
    static func publicDeclarations(module: String) throws -> [(place: String, documented: Bool)] {
        let folder = PackageRoot.url.appendingPathComponent("Sources/\(module)")
        let files = try FileManager.default.subpathsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
            .sorted()
        var found: [(place: String, documented: Bool)] = []
        for file in files {
            let lines = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false)
            for (index, line) in lines.enumerated() where line.prefixMatch(of: declaration) != nil {
                let above = lines[..<index].last { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("@") }
                found.append(
                    (
                        "\(module)/\(file):\(index + 1)",
                        above?.trimmingCharacters(in: .whitespaces).hasPrefix("///") == true
                    ))
            }
        }
        return found
    }

    @Test("StallReportKit has at most 250 public declarations, each with a doc comment")
    func stallReportKitSurface() throws {
        let declarations = try Self.publicDeclarations(module: "StallReportKit")
        #expect(!declarations.isEmpty)
        #expect(
            declarations.count <= Self.limit,
            "\(declarations.count) public declarations: make what only this package uses `package`")
        let undocumented = declarations.filter { !$0.documented }.map(\.place)
        #expect(undocumented.isEmpty, "public without a /// doc comment: \(undocumented)")
    }
}
