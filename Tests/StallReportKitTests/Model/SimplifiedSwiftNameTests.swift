import Foundation
import StallReportKit
import Testing

@testable import StallReportModel

@Suite("Simplified Swift names")
struct SimplifiedSwiftNameTests {
    /// Full names as reports hold them, and what `swift demangle --simplified` prints for the same symbols.
    static let examples: [(full: String, simplified: String)] = [
        (
            "static stall_demo.Scenarios.spinOnCPU(milliseconds: Swift.Int) -> ()",
            "static Scenarios.spinOnCPU(milliseconds:)"
        ),
        (
            "closure #1 @Sendable () -> () in static stall_demo.Scenarios.runCongestedTask(remaining: Swift.Int, microseconds: Swift.Int, done: @Sendable () -> ()) -> ()",
            "closure #1 in static Scenarios.runCongestedTask(remaining:microseconds:done:)"
        ),
        (
            "closure #7 @Sendable (@Sendable () -> ()) -> () in variable initialization expression of static stall_demo.DemoScenario.all : Swift.Array<stall_demo.DemoScenario>",
            "closure #7 in variable initialization expression of static DemoScenario.all"
        ),
        (
            "protocol witness for ArgumentParser.ParsableCommand.run() throws -> () in conformance stall_demo.StallDemoCommand : ArgumentParser.ParsableCommand in stall_demo",
            "protocol witness for ParsableCommand.run() in conformance StallDemoCommand"
        ),
        (
            "static (extension in ArgumentParser):ArgumentParser.ParsableCommand.main(Swift.Optional<Swift.Array<Swift.String>>) -> ()",
            "static ParsableCommand.main(_:)"
        ),
        (
            "reabstraction thunk helper from @escaping @callee_guaranteed (@guaranteed Swift.Optional<__C.CFRunLoopTimerRef>) -> () to @escaping @callee_unowned @convention(block) (@unowned Swift.Optional<__C.CFRunLoopTimerRef>) -> ()",
            "thunk for @escaping @callee_guaranteed (@guaranteed CFRunLoopTimerRef?) -> ()"
        ),
        (
            "discard #1 (Synchronization.Atomic<Swift.Int>) -> Swift.Bool in StallMonitor.ThreadWatch.(finishIfEnded in _87DF1F35BF024FE6EA601005A4181448)(now: Swift.UInt64, stopping: Swift.Bool) -> Swift.Bool",
            "discard #1 (_:) in ThreadWatch.finishIfEnded(now:stopping:)"
        ),
        (
            "StallMonitor.StallRecording.thinned.modify : Swift.Bool with unmangled suffix \".resume.0\"",
            "StallRecording.thinned.modify"
        ),
        (
            "generic specialization <Swift.Int8> of Swift.Array.reserveCapacity(Swift.Int) -> ()",
            "specialized Array.reserveCapacity(_:)"
        ),
        (
            "partial apply forwarder for closure #1 @Sendable () -> () in StallMonitor.StallMonitor.stop() async -> ()",
            "partial apply for closure #1 in StallMonitor.stop()"
        ),
        (
            "protocol witness for static Swift.Equatable.== infix(A, A) -> Swift.Bool in conformance stallreport.ColorChoice : Swift.Equatable in stallreport",
            "protocol witness for static Equatable.== infix(_:_:) in conformance ColorChoice"
        ),
        (
            "Logging.withLogger<A, B where B: Swift.Error>(logLevel: Swift.Optional<Logging.Logger.Level>, _: nonisolated(nonsending) (Logging.Logger) async throws(B) -> A) async throws(B) -> A",
            "withLogger<A, B>(logLevel:_:)"
        ),
        (
            "outlined destroy of Swift.Optional<(message: Swift.String, body: Swift.String)>",
            "outlined destroy of (message: String, body: String)?"
        ),
        (
            "(2) await resume partial function for StallMonitor.StallMonitor.flush(timeout: Swift.Duration) async -> Swift.Bool",
            "StallMonitor.flush(timeout:)"
        ),
        (
            "$defer #1 () -> () in StallMonitor.ThreadWatch.finishOnStop() -> ()",
            "$defer #1 () in ThreadWatch.finishOnStop()"
        ),
        (
            "StallReportKit.FlameGraphData.Summary.lastStart.getter : Swift.Optional<Swift.String>",
            "FlameGraphData.Summary.lastStart.getter"
        ),
    ]

    @Test("turns full names into what swift demangle --simplified prints")
    func examples() {
        for example in Self.examples {
            #expect(SimplifiedSwiftName.simplify(example.full) == example.simplified, "\(example.full)")
        }
    }

    @Test("leaves C, C++, addresses and placeholders alone")
    func nonSwiftNames() {
        for name in [
            "main", "__libc_start_call_main", "usleep", "start_thread",
            "std::vector<int, std::allocator<int> >::push_back(int const&)",
            "libstall.so+0x1a2b", "0x00007f12345678", "in nanosleep", "(no stack)", "no stack",
            "in syscall nanosleep (no stack)",
            "", "CFRunLoopRunSpecific", "_init", "memcpy@plt", "[syscall nanosleep]",
        ] {
            #expect(SimplifiedSwiftName.simplify(name) == name)
        }
        // Simplified functions and closures stay as they are (a bare path such as `T.x.getter`
        // cannot be told from a full one and loses its first component).
        for example in Self.examples where example.simplified.hasSuffix(")") && !example.simplified.contains(" for ") {
            #expect(SimplifiedSwiftName.simplify(example.simplified) == example.simplified, "\(example.simplified)")
        }
        #expect(FrameNameStyle.full.display(Self.examples[0].full) == Self.examples[0].full)
        #expect(FrameNameStyle.simplified.display(Self.examples[0].full) == Self.examples[0].simplified)
    }

    @Test("never crashes on garbled or random input")
    func fuzz() {
        var generator = SplitMix64(seed: 0x5EED_0F_2026)
        let alphabet = Array("abcXYZ_.:,()<>[]{} #@$-&?!=*/\\\"'`01τ…\u{1B}\n") + ["é", "🙂"]
        let tokens = [
            " in ", " : ", " -> ", "(", ")", "<", ">", "[", "]", "closure #1", "static ", "(extension in M):",
            "Swift.Optional<",
            " where A: ", "partial apply forwarder for ", "generic specialization <", "> of ", " infix(",
            "protocol witness for ",
            " in conformance ", " with unmangled suffix \"", "reabstraction thunk helper from ", " to ",
            "(1) await resume partial function for ",
        ]
        var inputs: [String] = []
        for _ in 0..<3_000 {
            var text = ""
            for _ in 0..<Int(generator.next() % 40) {
                if generator.next() % 2 == 0 {
                    text.append(alphabet[Int(generator.next() % UInt64(alphabet.count))])
                } else {
                    text += tokens[Int(generator.next() % UInt64(tokens.count))]
                }
            }
            inputs.append(text)
        }
        // Real names cut, spliced and with brackets dropped.
        for example in Self.examples {
            let characters = Array(example.full)
            for _ in 0..<200 {
                var copy = characters
                let cut = Int(generator.next() % UInt64(copy.count))
                switch generator.next() % 3 {
                case 0: copy = Array(copy[..<cut])
                case 1: copy.remove(at: cut)
                default: copy.insert(alphabet[Int(generator.next() % UInt64(alphabet.count))], at: cut)
                }
                inputs.append(String(copy))
            }
        }
        inputs.append(String(repeating: "(", count: 5_000))
        inputs.append(String(repeating: "Swift.Optional<", count: 500) + String(repeating: ">", count: 500))
        for input in inputs {
            let output = SimplifiedSwiftName.simplify(input)
            #expect(output == SimplifiedSwiftName.simplify(input))
            if !SimplifiedSwiftName.isCandidate(input) { #expect(output == input) }
        }
    }

    @Test("matches swift demangle --simplified on the symbols of the built binaries")
    func reference() throws {
        let bin = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let demangler = try #require(
            SymbolizerTools.locate("swift-demangle", path: ProcessInfo.processInfo.environment["PATH"] ?? ""),
            "swift-demangle not found on PATH")
        let nm = try #require(
            ["/usr/bin/nm", "/bin/nm", "/usr/bin/llvm-nm"].first { FileManager.default.isExecutableFile(atPath: $0) },
            "no nm")
        var symbols = Set<String>()
        for binary in ["stall-demo", "stallreport"] {
            let path = bin.appendingPathComponent(binary).path
            try #require(FileManager.default.isExecutableFile(atPath: path), "\(path) is not built")
            let listing = try ToolRunner.run(nm, [path], input: "")
            for line in listing.split(separator: "\n") {
                if let name = line.split(separator: " ").last, name.hasPrefix("$s") { symbols.insert(String(name)) }
            }
        }
        // A deterministic sample of at most 3000 symbols.
        let sorted = symbols.sorted()
        let step = max(1, sorted.count / 3_000)
        let sample = stride(from: 0, to: sorted.count, by: step).map { sorted[$0] }
        #expect(sample.count >= 1_000, "only \(sample.count) Swift symbols")
        let input = sample.joined(separator: "\n") + "\n"
        let full = try ToolRunner.run(demangler, ["--no-sugar"], input: input).split(
            separator: "\n", omittingEmptySubsequences: false
        ).map(String.init)
        let simplified = try ToolRunner.run(demangler, ["--simplified"], input: input).split(
            separator: "\n", omittingEmptySubsequences: false
        ).map(String.init)
        try #require(full.count >= sample.count && simplified.count >= sample.count)
        var mismatches: [String] = []
        var plainMismatches: [String] = []
        var plain = 0
        for index in sample.indices {
            let got = SimplifiedSwiftName.simplify(full[index])
            let isPlain = Self.isPlain(full[index])
            if isPlain { plain += 1 }
            guard got != simplified[index] else { continue }
            let line = "full:     \(full[index])\nexpected: \(simplified[index])\ngot:      \(got)"
            mismatches.append(line)
            if isPlain { plainMismatches.append(line) }
        }
        let share = 1 - Double(mismatches.count) / Double(sample.count)
        #expect(
            share >= 0.99,
            "\(mismatches.count) of \(sample.count) differ:\n\(mismatches.prefix(40).joined(separator: "\n\n"))")
        #expect(plain >= 300, "only \(plain) plain functions, methods, closures and accessors")
        #expect(
            plainMismatches.isEmpty,
            "\(plainMismatches.count) of \(plain) plain names differ:\n\(plainMismatches.prefix(40).joined(separator: "\n\n"))"
        )
    }

    /// Functions, methods, initializers, closures and accessors: what stack frames are made of.
    static func isPlain(_ full: String) -> Bool {
        var text = Substring(full)
        if text.hasPrefix("static ") { text = text.dropFirst(7) }
        if text.hasPrefix("closure #") || text.hasPrefix("implicit closure #") { return true }
        if text.hasPrefix("(extension in ") { return true }
        guard let first = text.split(separator: " ", maxSplits: 1).first else { return false }
        return first.contains(".") && first.first.map { $0.isLetter || $0 == "_" } == true
    }
}
