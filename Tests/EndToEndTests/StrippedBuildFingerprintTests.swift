import Foundation
import StallReportKit
import Testing

/// The production recipe end to end: a stripped `stall-demo` with its DWARF in a split debug file
/// (`objcopy --only-keep-debug`, `--strip-all`, `--add-gnu-debuglink`) writes reports without the
/// app's names; `stallreport symbolicate --debug-dir … --in-place` names them, and they then carry
/// the fingerprint the unstripped build's reports get in process, so `gate --baseline` made from
/// the unstripped run passes. The same for reports written with `symbolicateInProcess: false`.
@Suite("Stripped build: offline fingerprints equal in-process ones", .serialized)
struct StrippedBuildFingerprintTests {
    static let scenario = "cpu-spin-300"

    /// Runs `executable` (the built `stall-demo` or a path) for the scenario; its one report.
    static func demoReport(
        into directory: URL, executable: String, extra: [String] = []
    ) throws -> (file: URL, report: StallReport) {
        let run = try StallReportCLI.run(
            ["--output", directory.path, "--only", scenario] + extra, timeout: 60, executable: executable)
        #expect(run.status == 0, "\(run)")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasPrefix("stall-") && $0.hasSuffix(".json")
        }
        let name = try #require(names.count == 1 ? names.first : nil, "one report from \(executable): \(names)")
        let file = directory.appendingPathComponent(name)
        return (file, try StallReport.read(from: file))
    }

    @Test(
        "Stripped with split debug, and without in-process names: symbolicate --in-place gives the in-process fingerprint; gate --baseline passes"
    )
    func strippedAndDeferred() throws {
        #expect(SymbolizerTools.find() != nil, "llvm-symbolizer is needed (next to swift or on PATH)")
        let objcopy = "/usr/bin/objcopy"
        try #require(FileManager.default.isExecutableFile(atPath: objcopy), "objcopy (binutils) is needed")
        let directory = try ReportDirectory()
        let binary = try StallReportCLI.binary(named: "stall-demo")

        // The deployed binary has no symbol table and no DWARF; its debug file is elsewhere (not
        // next to it, so the monitor in the process does not find it through the debug link).
        let deployed = try directory.subdirectory("deployed").appendingPathComponent("stall-demo")
        let symbols = try directory.subdirectory("symbols")
        let debugFile = symbols.appendingPathComponent("stall-demo.debug")
        try FileManager.default.copyItem(at: binary, to: deployed)
        _ = try ToolRunner.run(objcopy, ["--only-keep-debug", binary.path, debugFile.path], input: "")
        _ = try ToolRunner.run(objcopy, ["--strip-all", deployed.path], input: "")
        _ = try ToolRunner.run(objcopy, ["--add-gnu-debuglink=\(debugFile.path)", deployed.path], input: "")
        #expect(
            ELFBuildID.read(path: deployed.path) == ELFBuildID.read(path: binary.path), "stripping keeps the build ID")
        #expect(ELFBuildID.read(path: debugFile.path) == ELFBuildID.read(path: binary.path))
        #expect(try ELFSymbolNames(path: binary.path).contains("stall_demo_main"))
        #expect(
            (try? ELFSymbolNames(path: deployed.path))?.contains("stall_demo_main") != true,
            "the deployed binary has no symbol table")

        // The reference: the unstripped build, named in process, and a baseline from it.
        let named = try Self.demoReport(into: directory.url.appendingPathComponent("named"), executable: "stall-demo")
            .report
        #expect(named.symbolication.symbolicator != "none")
        #expect(
            named.representativeStack.contains { named.frames[$0].inApp && named.frames[$0].symbol != nil },
            "the app's frames are named")
        let baseline = directory.url.appendingPathComponent("baseline.json")
        let made = try StallReportCLI.run([
            "baseline", directory.url.appendingPathComponent("named").path, "-o", baseline.path,
        ])
        #expect(made.status == 0, "\(made)")

        // The stripped build names system frames in process, not the app's.
        let strippedDirectory = directory.url.appendingPathComponent("stripped")
        let stripped = try Self.demoReport(into: strippedDirectory, executable: deployed.path)
        let mainImage = try #require(stripped.report.images.firstIndex { $0.isMainExecutable })
        let appFrames = stripped.report.frames.filter { $0.image == mainImage && $0.inApp }
        let before = try StallReportCLI.run(["gate", "--baseline", baseline.path, strippedDirectory.path])
        if AsyncCallChainTests.underSanitizer {
            // A sanitizer's build is linked with --export-dynamic: the names of exported functions
            // stay in .dynsym, which --strip-all keeps, and are found in process; the rest is not.
            #expect(appFrames.contains { $0.symbol == nil }, "some app frames are unnamed in the stripped process")
            #expect(before.status == (stripped.report.fingerprint == named.fingerprint ? 0 : 1), "\(before)")
        } else {
            #expect(
                !appFrames.isEmpty && appFrames.allSatisfy { $0.symbol == nil },
                "no app frame is named in the stripped process")
            #expect(stripped.report.fingerprint != named.fingerprint)
            // Without names, the gate sees a new fingerprint (and a fixed one): what the issue was.
            #expect(before.status == 1, "\(before)")
        }

        // Without in-process symbolication, from the unstripped and from the stripped build.
        let deferredDirectory = directory.url.appendingPathComponent("deferred")
        let deferred = try Self.demoReport(
            into: deferredDirectory, executable: "stall-demo", extra: ["--defer-symbolication"])
        #expect(deferred.report.frames.allSatisfy { $0.symbol == nil })
        let strippedDeferredDirectory = directory.url.appendingPathComponent("stripped-deferred")
        let strippedDeferred = try Self.demoReport(
            into: strippedDeferredDirectory, executable: deployed.path, extra: ["--defer-symbolication"])
        #expect(strippedDeferred.report.frames.allSatisfy { $0.symbol == nil })

        let symbolicate = try StallReportCLI.run([
            "symbolicate", "--debug-dir", symbols.path, "--in-place",
            strippedDirectory.path, deferredDirectory.path, strippedDeferredDirectory.path,
        ])
        #expect(symbolicate.status == 0, "\(symbolicate)")
        for (what, file, directory) in [
            ("stripped", stripped.file, strippedDirectory), ("deferred", deferred.file, deferredDirectory),
            ("stripped, deferred", strippedDeferred.file, strippedDeferredDirectory),
        ] {
            let offline = try StallReport.read(from: file)
            #expect(offline.fingerprint == named.fingerprint, "\(what): offline names give the in-process fingerprint")
            #expect(offline.representativeFunction == named.representativeFunction, "\(what)")
            let gate = try StallReportCLI.run(["gate", "--baseline", baseline.path, directory.path])
            #expect(gate.status == 0, "\(what): \(gate)")
            #expect(gate.stdout.contains("SAME 1 known fingerprint within tolerance"), "\(what): \(gate)")
        }

        // Symbolicating the in-process named reports adds locations at most: the fingerprint stays.
        let namedAgain = directory.url.appendingPathComponent("named")
        let again = try StallReportCLI.run(["symbolicate", "--debug-dir", symbols.path, "--in-place", namedAgain.path])
        #expect(again.status == 0, "\(again)")
        let gateAgain = try StallReportCLI.run(["gate", "--baseline", baseline.path, namedAgain.path])
        #expect(gateAgain.status == 0, "\(gateAgain)")
    }
}
