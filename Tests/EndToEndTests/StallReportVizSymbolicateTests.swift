import Foundation
import StallReportKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `stallreport symbolicate` on a real demo report whose names were removed, against a stripped
/// and an unstripped copy of the real `stall-demo` binary.
@Suite("stallreport symbolicate end to end", .serialized)
struct StallReportVizSymbolicateTests {
    /// A demo report as if written by a stripped build: the main image points at a `strip`ped
    /// copy of stall-demo (same build ID) and no frame has a symbol, offset, file or line.
    struct Setup {
        var directory: ReportDirectory
        var original: StallReport
        var input: URL
        var debugDirectory: URL
        var mainImage: Int
        var strippedBinary: URL
    }

    static func setUp() throws -> Setup {
        let demo = try VizDemo.run()
        let (_, original) = try demo.report(naming: "spinOnCPU")
        let directory = try ReportDirectory()
        let binary = try StallReportCLI.binary(named: "stall-demo")
        let stripped = try directory.subdirectory("deployed").appendingPathComponent("stall-demo")
        let debugDirectory = try directory.subdirectory("symbols")
        try FileManager.default.copyItem(at: binary, to: stripped)
        try FileManager.default.copyItem(at: binary, to: debugDirectory.appendingPathComponent("stall-demo"))
        let strip = try ToolRunner.run("/usr/bin/strip", [stripped.path], input: "")
        #expect(strip.isEmpty)
        let mainImage = try #require(original.images.firstIndex { $0.isMainExecutable })
        #expect(ELFBuildID.read(path: stripped.path) == original.images[mainImage].buildID, "strip keeps the build ID")
        var nameless = original
        nameless.images[mainImage].path = stripped.path
        for index in nameless.frames.indices {
            nameless.frames[index].symbol = nil
            nameless.frames[index].offset = nil
            nameless.frames[index].file = nil
            nameless.frames[index].line = nil
        }
        nameless.fingerprint = Fingerprint.make(
            Fingerprint.components(stack: [], classification: nameless.classification, syscall: nil))
        let input = try directory.subdirectory("in")
        try nameless.encoded().write(to: input.appendingPathComponent("stall.json"))
        return Setup(
            directory: directory, original: original, input: input, debugDirectory: debugDirectory,
            mainImage: mainImage, strippedBinary: stripped)
    }

    @Test("Offline names from the unstripped binary equal the in-process names; the stripped one gives none")
    func strippedBinary() throws {
        #expect(SymbolizerTools.find() != nil, "llvm-symbolizer is needed (next to swift or on PATH)")
        let setup = try Self.setUp()
        let original = setup.original
        let appFrames = original.frames.indices.filter { original.frames[$0].image == setup.mainImage }
        let namedInProcess = appFrames.filter { original.frames[$0].symbol != nil }
        try #require(namedInProcess.count >= 3, "the demo report should name its own frames")

        // Against the stripped binary at the recorded path: no names for the app's frames.
        let strippedOut = setup.directory.url.appendingPathComponent("out-stripped")
        let first = try StallReportCLI.run(["symbolicate", setup.input.path, "--output", strippedOut.path])
        #expect(first.status == 0, "\(first)")
        let fromStripped = try StallReport.read(from: strippedOut.appendingPathComponent("stall.json"))
        // strip keeps the dynamic symbol table: only exported functions (e.g. a sanitizer
        // runtime's interceptors under Scripts/sanitize) may still be named.
        let exported = try ELFSymbolNames(path: setup.strippedBinary.path, dynamic: true)
        for index in appFrames {
            let name = fromStripped.frames[index].symbol
            #expect(name == nil || exported.contains(name!), "stripped binary named \(name ?? "")")
            #expect(fromStripped.frames[index].file == nil)
        }

        // With the unstripped binary in --debug-dir: the in-process names, file and line.
        let out = setup.directory.url.appendingPathComponent("out")
        let second = try StallReportCLI.run([
            "symbolicate", setup.input.path, "--debug-dir", setup.debugDirectory.path, "--output", out.path,
        ])
        #expect(second.status == 0, "\(second)")
        #expect(second.stdout.contains("wrote \(out.path)/stall.json: named"))
        let symbolicated = try StallReport.read(from: out.appendingPathComponent("stall.json"))
        var comparedLocations = 0
        // Where one address has several names, libdw and llvm-symbolizer may pick different ones.
        let symbols = try ELFSymbolNames(path: setup.debugDirectory.appendingPathComponent("stall-demo").path)
        var aliasesPicked = 0
        for index in namedInProcess {
            let before = original.frames[index]
            let after = symbolicated.frames[index]
            if after.symbol != before.symbol, symbols.sameFunction(after.symbol, before.symbol) {
                aliasesPicked += 1
            } else {
                #expect(after.symbol == before.symbol, "frame \(index) at \(before.address)")
            }
            #expect(after.offset == before.offset, "offset of \(before.symbol ?? "")")
            if let file = before.file, let line = before.line, let newFile = after.file, let newLine = after.line {
                #expect("\(newFile):\(newLine)" == "\(file):\(line)")
                comparedLocations += 1
            }
        }
        #expect(comparedLocations >= 3, "file:line compared for too few frames")
        // The names were all missing before, so the fingerprint was recomputed: back to the
        // in-process one (unless an alias was named differently, which changes the fingerprint).
        if aliasesPicked == 0 {
            #expect(symbolicated.fingerprint == original.fingerprint)
        }
        #expect(symbolicated.symbolication.note?.contains("llvm-symbolizer") == true)
        // The input was not touched.
        let input = try StallReport.read(from: setup.input.appendingPathComponent("stall.json"))
        #expect(input.frames.allSatisfy { $0.symbol == nil })
    }

    @Test("--in-place rewrites atomically, keeps the file's permissions and leaves no temporary file")
    func inPlace() throws {
        let setup = try Self.setUp()
        let file = setup.input.appendingPathComponent("stall.json")
        chmod(file.path, 0o600)
        let run = try StallReportCLI.run([
            "symbolicate", "--in-place", "--debug-dir", setup.debugDirectory.path, setup.input.path,
        ])
        #expect(run.status == 0, "\(run)")
        let rewritten = try StallReport.read(from: file)
        #expect(rewritten.frames.contains { $0.symbol?.contains("spinOnCPU") == true })
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: setup.input.path) == ["stall.json"])
        let again = try StallReportCLI.run([
            "symbolicate", "--in-place", "--debug-dir", setup.debugDirectory.path, setup.input.path,
        ])
        #expect(again.stdout.contains("unchanged"))
    }

    @Test(
        "Without llvm-symbolizer it says so and exits 2; without --output or --in-place it refuses; a missing image is named"
    )
    func refusals() throws {
        let setup = try Self.setUp()
        let noTool = try StallReportCLI.run(
            ["symbolicate", setup.input.path, "--output", setup.directory.url.appendingPathComponent("o").path],
            environment: ["PATH": "/nonexistent"])
        #expect(noTool.status == 2)
        #expect(noTool.stderr.contains("llvm-symbolizer not found"))
        let noTarget = try StallReportCLI.run(["symbolicate", setup.input.path])
        #expect(noTarget.status == 2)
        #expect(noTarget.stderr.contains("--in-place"))
        var moved = try StallReport.read(from: setup.input.appendingPathComponent("stall.json"))
        moved.images[setup.mainImage].path = "/nonexistent/stall-demo"
        let movedInput = try setup.directory.subdirectory("moved")
        try moved.encoded().write(to: movedInput.appendingPathComponent("stall.json"))
        let missing = try StallReportCLI.run([
            "symbolicate", movedInput.path, "--output", setup.directory.url.appendingPathComponent("o2").path,
        ])
        #expect(missing.status == 0, "\(missing)")
        #expect(
            missing.stderr.contains(
                "no file for /nonexistent/stall-demo (build ID \(moved.images[setup.mainImage].buildID ?? "")"))
    }
}
