import Testing

extension DocSnippetsTests {
    @Test(
        "the check itself: a new block, a drifted copy, a stale copy, a dangling fragment marker and a misplaced marker are caught"
    )
    func checkCatchesEachKindOfMistake() {
        let doc = """
            Start it:

            ```swift
            import StallMonitor

            @main struct App {
                static func main() {}
            }
            ```

            <!-- snippet: fragment -->

            ```swift
            .target(name: "MyApp")
            ```

              ```swift
              monitor.stop()
              ```

            ```sh
            swift build
            ```
            <!-- snippet: fragment -->
            A sentence.
            """
        let found = Self.blocks(in: doc, file: "A.md")
        #expect(found.blocks.map(\.isFragment) == [false, true, false])
        #expect(found.blocks.first?.lines == ["import StallMonitor", "struct App {", "static func main() {}", "}"])
        #expect(found.problems == ["A.md:24: \(Self.fragmentMarker) is not followed by a ```swift block"])

        let source = """
            // snippet: A.md
            import StallMonitor
            // snippet: pause
            enum Wrapper {
                // snippet: resume
                struct App {
                    static func main() {}
                }
                // snippet: end
            }
            func wrapper() {
                // snippet: A.md
                monitor.stop()
                // snippet: end
                // snippet: resume
            }
            """
        let copied = Self.copies(in: source, file: "A.swift")
        #expect(copied.problems == ["A.swift:15: a misplaced `// snippet: resume`"])
        #expect(Self.problems(blocks: found.blocks, copies: copied.copies) == [])

        var drifted = copied.copies
        drifted[1].lines = ["monitor.stop(); monitor.flush()"]
        let problems = Self.problems(
            blocks: found.blocks, copies: drifted + [Snippet(doc: "B.md", place: "B.swift:1", lines: ["x"])])
        #expect(problems.count == 3, "\(problems)")
        #expect(problems.first?.hasPrefix("A.md:17: this ```swift block has no identical copy") == true)
        #expect(problems.last?.hasPrefix("B.swift:1: this copy of a snippet of B.md is no block of that doc") == true)
    }
}
