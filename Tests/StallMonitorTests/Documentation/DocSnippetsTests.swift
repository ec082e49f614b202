import Foundation
import StallReportKitTestSupport
import Testing

/// Every ```` ```swift ```` block of README.md and the DocC articles compiles in Swift 6 mode, or is
/// marked as a fragment. The build compiles the `DocSnippets` target (`Tests/DocSnippets`, one file
/// per article), which holds a copy of each snippet; these tests keep the copies and the docs equal,
/// so a snippet cannot be added, changed or removed in one place only. The convention:
///
/// 1. A block that cannot compile on its own (a `Package.swift` excerpt) is a fragment: the line
///    `<!-- snippet: fragment -->` comes right before its fence (blank lines between are allowed).
///    It renders as nothing on GitHub and in DocC.
/// 2. Every other block has a copy in a Swift file under `Tests/DocSnippets` (or, for a snippet
///    that needs a package the library must not depend on, under `Examples/<package>/Sources`,
///    which the example's script builds), between the lines
///    `// snippet: <the doc's path from the repository root>` and `// snippet: end`. Lines between
///    `// snippet: pause` and `// snippet: resume` are wrapping, not part of the copy.
/// 3. Wrapping is mechanical: imports stay at the file's top level, and the rest of a program
///    (top-level code, a fragment of a function) becomes the body of a function whose parameters
///    are the names the snippet uses without declaring them (`configuration`, `logger`), or a
///    member of a type when other snippets declare the same names. Names every reader supplies
///    (`parseLargeDocument()`, `reports`) are declared in `Tests/DocSnippets/Context.swift`. A
///    module has one entry point, so a copy leaves out `@main`. Statements after `// snippet: end`
///    may use what the snippet declares (`_ = monitor`), so an unused value warns no one.
/// 4. Copy and block are compared line by line without leading and trailing spaces and without
///    blank lines (the copy is indented by its wrapping; the doc's `@main` is left out).
@Suite("Every Swift snippet in README and DocC is compiled in Tests/DocSnippets, or marked a fragment")
struct DocSnippetsTests {
    /// The line that marks the next ```` ```swift ```` block as a fragment.
    static let fragmentMarker = "<!-- snippet: fragment -->"
    /// The folder of the `DocSnippets` target, relative to the repository root.
    static let snippetsFolder = "Tests/DocSnippets"

    /// A ```` ```swift ```` block of a doc, or the copy of one in `Tests/DocSnippets`.
    struct Snippet {
        /// For a block, its doc; for a copy, the doc its marker names.
        var doc: String
        /// Where it starts (`file:line`), for messages.
        var place: String
        /// Its lines, normalized (see ``DocSnippetsTests/normalized(_:dropsMain:)``).
        var lines: [String]
        /// Whether the doc marks it as a fragment (blocks only).
        var isFragment = false
    }

    /// `lines` without leading and trailing spaces and without blank lines; with `dropsMain`, a
    /// leading `@main` attribute is left out too (as copies do).
    static func normalized(_ lines: [Substring], dropsMain: Bool) -> [String] {
        lines.compactMap { line -> String? in
            var trimmed = line.trimmingCharacters(in: .whitespaces)
            if dropsMain, trimmed == "@main" { return nil }
            if dropsMain, trimmed.hasPrefix("@main ") {
                trimmed = String(trimmed.dropFirst(6)).trimmingCharacters(in: .whitespaces)
            }
            return trimmed.isEmpty ? nil : trimmed
        }
    }

    /// The ```` ```swift ```` blocks of a doc, and the problems of its fragment markers (one that no
    /// ```` ```swift ```` block follows).
    static func blocks(in text: String, file: String) -> (blocks: [Snippet], problems: [String]) {
        var blocks: [Snippet] = []
        var problems: [String] = []
        var fence: (start: Int, isSwift: Bool, body: [Substring])?
        var markerLine: Int?
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if var open = fence {
                if trimmed.hasPrefix("```") {
                    if open.isSwift { blocks[blocks.count - 1].lines = normalized(open.body, dropsMain: true) }
                    fence = nil
                } else {
                    open.body.append(line)
                    fence = open
                }
                continue
            }
            if trimmed.hasPrefix("```") {
                let isSwift = trimmed.dropFirst(3).trimmingCharacters(in: .whitespaces) == "swift"
                if isSwift {
                    blocks.append(
                        Snippet(doc: file, place: "\(file):\(index + 1)", lines: [], isFragment: markerLine != nil))
                } else if let marker = markerLine {
                    problems.append("\(file):\(marker + 1): \(fragmentMarker) is not followed by a ```swift block")
                }
                markerLine = nil
                fence = (index, isSwift, [])
            } else if trimmed == fragmentMarker {
                markerLine = index
            } else if !trimmed.isEmpty, let marker = markerLine {
                problems.append("\(file):\(marker + 1): \(fragmentMarker) is not followed by a ```swift block")
                markerLine = nil
            }
        }
        if let open = fence { problems.append("\(file):\(open.start + 1): a code block is never closed") }
        if let marker = markerLine {
            problems.append("\(file):\(marker + 1): \(fragmentMarker) is not followed by a ```swift block")
        }
        return (blocks, problems)
    }

    /// The marked copies in one Swift file, and the problems of its markers.
    static func copies(in text: String, file: String) -> (copies: [Snippet], problems: [String]) {
        var copies: [Snippet] = []
        var problems: [String] = []
        var open: (snippet: Snippet, body: [Substring], paused: Bool)?
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            let place = "\(file):\(index + 1)"
            guard trimmed.hasPrefix("// snippet:") else {
                if let current = open, !current.paused { open?.body.append(line) }
                continue
            }
            switch (trimmed.dropFirst("// snippet:".count).trimmingCharacters(in: .whitespaces), open) {
            case ("end", let current?):
                copies.append(
                    Snippet(
                        doc: current.snippet.doc, place: current.snippet.place,
                        lines: normalized(current.body, dropsMain: false)))
                open = nil
            case ("pause", let current?) where !current.paused: open?.paused = true
            case ("resume", let current?) where current.paused: open?.paused = false
            case (let doc, nil) where !["end", "pause", "resume"].contains(doc):
                open = (Snippet(doc: doc, place: place, lines: []), [], false)
            case (let marker, _):
                problems.append("\(place): a misplaced `// snippet: \(marker)`")
            }
        }
        if let current = open { problems.append("\(current.snippet.place): a copy without `// snippet: end`") }
        return (copies, problems)
    }

    /// The problems of the docs' blocks against the copies: a block without a copy (new, or
    /// changed on one side only) and a copy without a block (stale).
    static func problems(blocks: [Snippet], copies: [Snippet]) -> [String] {
        var problems: [String] = []
        var unmatched = copies
        for block in blocks where !block.isFragment {
            if let match = unmatched.firstIndex(where: { $0.doc == block.doc && $0.lines == block.lines }) {
                unmatched.remove(at: match)
            } else {
                problems.append(
                    "\(block.place): this ```swift block has no identical copy in \(snippetsFolder) or an example's Sources "
                        + "(copy it there, or mark it \(fragmentMarker) if it cannot compile on its own)")
            }
        }
        for copy in unmatched {
            problems.append(
                "\(copy.place): this copy of a snippet of \(copy.doc) is no block of that doc (changed or removed there?)"
            )
        }
        return problems
    }

    /// The Swift files that hold copies, relative to the repository root: the `DocSnippets`
    /// target's, and the sources of the nested packages under `Examples/` (a snippet that needs a
    /// package the library must not depend on, such as swift-otel, is compiled there: by the
    /// example's script, which CI runs).
    static func snippetFiles() throws -> [String] {
        let root = PackageRoot.url
        let examples = root.appendingPathComponent("Examples")
        let examplePackages = (try? FileManager.default.contentsOfDirectory(atPath: examples.path)) ?? []
        let folders =
            [root.appendingPathComponent(snippetsFolder)]
            + examplePackages.sorted().map { examples.appendingPathComponent($0).appendingPathComponent("Sources") }
            .filter { FileManager.default.fileExists(atPath: $0.path) }
        let rootPrefix = root.standardizedFileURL.path + "/"
        var files: [String] = []
        for folder in folders {
            guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else {
                throw SnippetCheckError(description: "cannot list \(folder.path)")
            }
            for case let url as URL in walker where url.pathExtension == "swift" {
                files.append(String(url.standardizedFileURL.path.dropFirst(rootPrefix.count)))
            }
        }
        return files.sorted()
    }

    @Test(
        "every ```swift block of README.md and the DocC catalogs is compiled in Tests/DocSnippets, or marked a fragment"
    )
    func everySnippetIsCompiledOrAFragment() throws {
        let root = PackageRoot.url
        var blocks: [Snippet] = []
        var copies: [Snippet] = []
        var problems: [String] = []
        for file in try DocumentedFiguresTests.documentationFiles() {
            let found = Self.blocks(
                in: try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8), file: file)
            blocks += found.blocks
            problems += found.problems
        }
        for file in try Self.snippetFiles() {
            let found = Self.copies(
                in: try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8), file: file)
            copies += found.copies
            problems += found.problems
        }
        problems += Self.problems(blocks: blocks, copies: copies)
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
        #expect(
            blocks.count > 25 && copies.count > 20,
            "the docs have snippets (\(blocks.count)) and most are compiled (\(copies.count))")
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        #expect(
            manifest.contains("path: \"\(Self.snippetsFolder)\""),
            "Package.swift declares the target that compiles the copies")
    }
}

/// A folder that cannot be listed.
private struct SnippetCheckError: Error, CustomStringConvertible {
    /// What went wrong.
    var description: String
}
