import Foundation
import StallReportKitTestSupport
import Testing

/// Benchmark figures live in one place, `Reports/benchmarks/latest.json` (and its table,
/// `latest.md`). README.md and the DocC articles (every `.md` in a `.docc` catalog under `Sources/`)
/// link there instead of restating results. Where a page does quote one, it follows this
/// convention, which these tests enforce:
///
/// 1. A quoted result is written as the marker `<!-- figure ID -->` immediately followed by an
///    inline code span, e.g. ``wakes <!-- figure 11b -->`49.8/s` ``. `ID` is a row of
///    `latest.json` (`figures[].rows[].figure`, such as `11b`), and the code span's text must
///    appear verbatim in that row's `value`. Re-running `Scripts/bench` therefore fails this test
///    until every quote is updated (or removed).
/// 2. A marker never begins a line: a line starting with `<!--` is an HTML block in CommonMark,
///    which hides the whole line in DocC and on GitHub.
/// 3. Any other line that names a figure ("figure 11b", "figures 7d and 7e", "Figure 13") carries
///    no number besides the figure ids, outside fenced code blocks: a figure is either quoted
///    with a marker or referred to without a value.
@Suite("Benchmark figures quoted in README and DocC match Reports/benchmarks/latest.json")
struct DocumentedFiguresTests {
    /// README.md and every Markdown file inside a `.docc` catalog under `Sources/`, as paths
    /// relative to the repository root.
    static func documentationFiles() throws -> [String] {
        var files = ["README.md"]
        let sources = PackageRoot.url.appendingPathComponent("Sources")
        guard let walker = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil) else {
            throw DocumentationError("cannot list \(sources.path)")
        }
        let rootPrefix = PackageRoot.url.standardizedFileURL.path + "/"
        for case let url as URL in walker where url.pathExtension == "md" && url.path.contains(".docc/") {
            files.append(String(url.standardizedFileURL.path.dropFirst(rootPrefix.count)))
        }
        return files.sorted()
    }

    /// `figure id` → `value` of every row of `Reports/benchmarks/latest.json`.
    static func latestValues() throws -> [String: String] {
        struct Latest: Decodable {
            struct Figure: Decodable { var rows: [Row] }
            struct Row: Decodable {
                var figure: String
                var value: String
            }
            var figures: [Figure]
        }
        let data = try Data(contentsOf: PackageRoot.url.appendingPathComponent("Reports/benchmarks/latest.json"))
        var values: [String: String] = [:]
        for figure in try JSONDecoder().decode(Latest.self, from: data).figures {
            for row in figure.rows { values[row.figure] = row.value }
        }
        return values
    }

    /// One quoted figure: the marker's id and the code span after it (nil: no code span follows).
    struct Quote: Equatable {
        var id: String
        var text: String?
    }

    /// Regexes are not Sendable: each use makes its own.
    static var marker: Regex<(Substring, Substring, Substring?, Substring?)> {
        #/<!--\s*figure\s+([0-9]+[a-z]?)\s*-->(`([^`\n]+)`)?/#
    }
    /// A reference to figures by id: "figure 10", "figures 7d and 7e", "Figures 7b to 7f",
    /// "figure 10e/10f", "--figure 1,5".
    static var reference: Regex<Substring> {
        #/[Ff]igures?\s+[0-9]{1,2}[a-z]?(?:\s*(?:,|/|and|or|to)\s*[0-9]{1,2}[a-z]?)*/#
    }

    static func quotes(in line: Substring) -> [Quote] {
        line.matches(of: marker).map { Quote(id: String($0.output.1), text: $0.output.3.map(String.init)) }
    }

    /// The problems of one file's text against `values` (one line per problem, `file:line: what`).
    static func problems(in text: String, file: String, values: [String: String]) -> [String] {
        var problems: [String] = []
        var inFence = false
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let place = "\(file):\(index + 1)"
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                inFence.toggle()
                continue
            }
            if inFence { continue }
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("<!--") && line.contains(marker) {
                problems.append("\(place): a figure marker begins the line (an HTML block: the line would not render)")
            }
            for quote in quotes(in: line) {
                guard let value = values[quote.id] else {
                    problems.append("\(place): figure \(quote.id) is not in Reports/benchmarks/latest.json")
                    continue
                }
                guard let quoted = quote.text else {
                    problems.append(
                        "\(place): the marker of figure \(quote.id) is not followed by a code span with the quoted value"
                    )
                    continue
                }
                if !value.contains(quoted) {
                    problems.append(
                        "\(place): figure \(quote.id) quoted as \"\(quoted)\", but latest.json says \"\(value)\"")
                }
            }
            guard line.contains(reference) else { continue }
            let rest = line.replacing(marker, with: "").replacing(reference, with: "")
            if rest.contains(where: \.isNumber) {
                problems.append(
                    "\(place): names a figure and a number without a `<!-- figure ID -->` marker: \(line.trimmingCharacters(in: .whitespaces))"
                )
            }
        }
        return problems
    }

    @Test(
        "every figure quoted in README.md and the DocC catalogs is the value in latest.json, and no other line quotes one"
    )
    func quotedFiguresMatchLatest() throws {
        let values = try Self.latestValues()
        #expect(values.count > 20, "latest.json has rows")
        let files = try Self.documentationFiles()
        #expect(files.contains("Sources/StallMonitor/StallMonitor.docc/StallMonitor.md"))
        var problems: [String] = []
        var quoteCount = 0
        for file in files {
            let text = try String(contentsOf: PackageRoot.url.appendingPathComponent(file), encoding: .utf8)
            quoteCount += text.split(separator: "\n").reduce(0) { $0 + Self.quotes(in: $1).count }
            problems += Self.problems(in: text, file: file, values: values)
        }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
        #expect(quoteCount > 0, "the convention is in use (the NIO and MainActor articles quote figures)")
    }

    @Test(
        "the check itself: a wrong value, an unknown figure, a bare marker, a marker at a line's start and an unmarked number are caught"
    )
    func checkCatchesEachKindOfMistake() {
        let values = [
            "11b": "49.8/s, 1852.3 µs of CPU per second (both loops idle)", "12a": "49.7/s, 1906 µs of CPU per second",
        ]
        let good = """
            the watchdog wakes <!-- figure 11b -->`49.8/s` and uses <!-- figure 11b -->`1852.3 µs of CPU per second`;
            figure 11b measures the idle cost; figures 7d and 7e the memory (see `Reports/benchmarks/latest.md`).
            ```
            figure 12a 5.5 ms inside a code block is not prose
            ```
            """
        #expect(Self.problems(in: good, file: "good.md", values: values) == [])
        let bad = """
            wakes <!-- figure 11b -->`50.1/s` on the VM
            uses <!-- figure 99z -->`1 ms`
            uses <!-- figure 12a --> and quotes nothing
            <!-- figure 12a -->`49.7/s` at the start of a line
            idle CPU 5.5 ms per second (figure 11b)
            """
        let problems = Self.problems(in: bad, file: "bad.md", values: values)
        #expect(problems.count == 5, "\(problems)")
        #expect(problems.first?.hasPrefix("bad.md:1: figure 11b quoted as \"50.1/s\"") == true)
    }
}

private struct DocumentationError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
