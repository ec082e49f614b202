import Foundation
import StallReportKitTestSupport
import Testing

@testable import StallReportKit

@Suite("Offline symbolication parts")
struct SymbolicationTests {
    /// A minimal ELF file with one PT_NOTE segment holding a GNU build ID note.
    static func elf(buildID: [UInt8], is64: Bool = true, littleEndian: Bool = true, extraNoteFirst: Bool = true) -> Data
    {
        func int(_ value: UInt64, _ width: Int) -> [UInt8] {
            let bytes = (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
            return littleEndian ? bytes : bytes.reversed()
        }
        func note(name: String, type: UInt64, desc: [UInt8]) -> [UInt8] {
            var nameBytes = Array(name.utf8) + [0]
            let nameSize = nameBytes.count
            while nameBytes.count % 4 != 0 { nameBytes.append(0) }
            var descBytes = desc
            while descBytes.count % 4 != 0 { descBytes.append(0) }
            return int(UInt64(nameSize), 4) + int(UInt64(desc.count), 4) + int(type, 4) + nameBytes + descBytes
        }
        let notes =
            (extraNoteFirst ? note(name: "GNU", type: 1, desc: [0, 0, 0, 0, 3, 2, 0, 0]) : [])
            + note(name: "GNU", type: 3, desc: buildID)
        let headerSize = is64 ? 64 : 52
        let phentsize = is64 ? 56 : 32
        let noteOffset = UInt64(headerSize + phentsize)
        var header: [UInt8] =
            [0x7F, 0x45, 0x4C, 0x46, is64 ? 2 : 1, littleEndian ? 1 : 2, 1, 0] + [UInt8](repeating: 0, count: 8)
        header += int(3, 2) + int(62, 2) + int(1, 4)  // e_type DYN, e_machine, e_version
        if is64 {
            header += int(0, 8) + int(UInt64(headerSize), 8) + int(0, 8)  // entry, phoff, shoff
            header += int(0, 4) + int(64, 2) + int(56, 2) + int(1, 2) + int(64, 2) + int(0, 2) + int(0, 2)
        } else {
            header += int(0, 4) + int(UInt64(headerSize), 4) + int(0, 4)
            header += int(0, 4) + int(52, 2) + int(32, 2) + int(1, 2) + int(40, 2) + int(0, 2) + int(0, 2)
        }
        var phdr: [UInt8]
        if is64 {
            phdr =
                int(4, 4) + int(4, 4) + int(noteOffset, 8) + int(0, 8) + int(0, 8) + int(UInt64(notes.count), 8)
                + int(UInt64(notes.count), 8) + int(4, 8)
        } else {
            phdr =
                int(4, 4) + int(noteOffset, 4) + int(0, 4) + int(0, 4) + int(UInt64(notes.count), 4)
                + int(UInt64(notes.count), 4) + int(4, 4) + int(4, 4)
        }
        return Data(header + phdr + notes)
    }

    static func write(_ data: Data, _ name: String, in directory: URL) throws -> String {
        let url = directory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
        return url.path
    }

    @Test("The GNU build ID is read from PT_NOTE in 64- and 32-bit files of both byte orders")
    func buildIDs() throws {
        let directory = try ReportFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let id: [UInt8] = [
            0x7f, 0x36, 0x97, 0x41, 0xee, 0x8e, 0x9e, 0xb7, 0xc4, 0xdd, 0x1f, 0xb4, 0x73, 0x7e, 0x7b, 0x2e, 0xf4, 0x7b,
            0x9b, 0x1c,
        ]
        for is64 in [true, false] {
            for littleEndian in [true, false] {
                let path = try Self.write(
                    Self.elf(buildID: id, is64: is64, littleEndian: littleEndian), "e-\(is64)-\(littleEndian)",
                    in: directory)
                #expect(
                    ELFBuildID.read(path: path) == "7f369741ee8e9eb7c4dd1fb4737e7b2ef47b9b1c",
                    "64-bit \(is64), LE \(littleEndian)")
            }
        }
    }

    @Test("Damaged, truncated, empty and non-ELF files have no build ID, and reading them does not crash")
    func damagedFiles() throws {
        let directory = try ReportFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let good = Self.elf(buildID: [1, 2, 3, 4])
        #expect(ELFBuildID.read(path: try Self.write(good, "good", in: directory)) == "01020304")
        for cut in [0, 10, 63, 100, good.count - 3] {
            #expect(ELFBuildID.read(path: try Self.write(good.prefix(cut), "cut-\(cut)", in: directory)) == nil)
        }
        var huge = good
        huge[120] = 0xFF
        huge[121] = 0xFF
        huge[122] = 0xFF
        huge[123] = 0x7F  // the first note's name size
        #expect(ELFBuildID.read(path: try Self.write(huge, "huge", in: directory)) == nil)
        #expect(
            ELFBuildID.read(path: try Self.write(Data("not an ELF file at all".utf8), "text", in: directory)) == nil)
        #expect(ELFBuildID.read(path: directory.appendingPathComponent("missing").path) == nil)
    }

    @Test("A real binary's build ID matches readelf's")
    func realBinary() throws {
        let readelf = ["/usr/bin/readelf", "/usr/bin/eu-readelf"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        try #require(readelf != nil, "readelf is needed for this test")
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let output = try ToolRunner.run(readelf!, ["-n", executable], input: "")
        let line = try #require(output.split(separator: "\n").first { $0.contains("Build ID:") })
        let expected = line.split(separator: ":").last!.trimmingCharacters(in: .whitespaces)
        #expect(ELFBuildID.read(path: executable) == expected)
    }

    @Test("Debug directories come first; a file with another build ID is refused and named")
    func locating() throws {
        let directory = try ReportFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recorded = try Self.write(Self.elf(buildID: [0xab, 0xcd, 0xef, 0x01]), "bin/App", in: directory)
        let debug = directory.appendingPathComponent("debug").path
        let image = StallReport.Image(
            path: recorded, loadAddress: "0x1000", loadBias: "0x1000", buildID: "abcdef01", isMainExecutable: true)
        let locator = SymbolFileLocator(debugDirectories: [debug])
        #expect(
            locator.candidates(for: image).map(\.0) == [
                "\(debug)/.build-id/ab/cdef01.debug", "\(debug)/App.debug", "\(debug)/App", recorded,
            ])
        #expect(try locator.locate(image).get() == .init(path: recorded, source: .recordedPath))
        _ = try Self.write(Self.elf(buildID: [0xab, 0xcd, 0xef, 0x01]), "debug/App", in: directory)
        #expect(try locator.locate(image).get() == .init(path: "\(debug)/App", source: .debugDirectoryName))
        _ = try Self.write(
            Self.elf(buildID: [0xab, 0xcd, 0xef, 0x01]), "debug/.build-id/ab/cdef01.debug", in: directory)
        #expect(try locator.locate(image).get().source == .debugDirectoryBuildID)
        var other = image
        other.buildID = "12345678"
        guard case .failure(let error) = locator.locate(other) else {
            Issue.record("a file with another build ID was accepted")
            return
        }
        #expect(error.description.contains("\(recorded) has build ID abcdef01"))
    }

    @Test("llvm-symbolizer JSON: names, offsets from the function start, file:line only with a line")
    func parseSymbolizer() {
        let output = """
            {"Address":"0x28881e","ModuleName":"/b","Symbol":[{"Column":50,"FileName":"/s/Scenarios.swift","FunctionName":"$s4main4spinyyF","Line":14,"StartAddress":"0x2885a0","StartFileName":"","StartLine":10}]}
            {"Address":"0x28b068","ModuleName":"/b","Symbol":[{"Column":0,"FileName":"/<compiler-generated>","FunctionName":"$s4main1fyyF","Line":0,"StartAddress":"0x28b020"}]}
            {"Address":"0x1000","ModuleName":"/b","Symbol":[{"Column":0,"FileName":"crtstuff.c","FunctionName":"memcpy","Line":0,"StartAddress":""}]}
            {"Address":"0x2000","ModuleName":"/b","Symbol":[{"Column":0,"FileName":"","FunctionName":"","Line":0,"StartAddress":""}]}
            not json
            """
        let symbols = LLVMSymbolizer.parse(output)
        #expect(symbols[0x28881e] == .init(name: "$s4main4spinyyF", offset: 638, file: "/s/Scenarios.swift", line: 14))
        #expect(symbols[0x28b068] == .init(name: "$s4main1fyyF", offset: 72, file: nil, line: nil))
        #expect(symbols[0x1000] == .init(name: "memcpy", offset: nil, file: nil, line: nil))
        #expect(symbols[0x2000] == nil)
        #expect(symbols.count == 3)
    }

    @Test(
        "Only missing fields are filled; a named report keeps its fingerprint, one without names gets its named stack's"
    )
    func applying() throws {
        let tools = SymbolizerTools(symbolizer: "/bin/false", demangler: nil)
        let symbolicator = ReportSymbolicator(tools: tools, locator: SymbolFileLocator(debugDirectories: []))
        let named = ReportFixtures.report(appSymbols: ["App.spin()"], durationMs: 500)
        let lookup: (StallReport.Frame) -> LLVMSymbolizer.Symbol? = { frame in
            .init(name: "offline \(frame.address)", offset: 7, file: "/offline.swift", line: 3)
        }
        // A named report keeps names and fingerprint; frames without a file get one.
        let kept = symbolicator.apply(to: named, lookup: lookup)
        #expect(kept.report.frames.map(\.symbol) == named.frames.map(\.symbol))
        #expect(kept.report.fingerprint == named.fingerprint)
        #expect(kept.report.frames[1].file == ReportFixtures.appFile)
        #expect(kept.report.frames[0].file == "/offline.swift" && kept.report.frames[0].offset == 24)
        #expect(kept.named == 0 && kept.located == 3 && kept.previousFingerprint == nil)
        // A report without any name gets names and the fingerprint of its named stack.
        var stripped = named
        for index in stripped.frames.indices {
            stripped.frames[index].symbol = nil
            stripped.frames[index].offset = nil
        }
        stripped.fingerprint = Fingerprint.make(["nostack", "cpu", "-"])
        let filled = symbolicator.apply(to: stripped, lookup: lookup)
        #expect(filled.named == stripped.frames.count && filled.unnamed == 0)
        #expect(
            filled.report.frames[1].symbol == "offline \(named.frames[1].address)"
                && filled.report.frames[1].offset == 7)
        let expected = Fingerprint.make(
            Fingerprint.components(stack: filled.report.frames, classification: .cpu, syscall: nil))
        #expect(filled.report.fingerprint == expected)
        #expect(filled.previousFingerprint == stripped.fingerprint)
        #expect(filled.report.symbolication.note?.contains("fingerprint was \(stripped.fingerprint)") == true)
    }

    @Test("Atomic writes replace the file with the given permissions and leave no temporary file")
    func atomicWrite() throws {
        let directory = try ReportFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("r.json").path
        try Data("old".utf8).write(to: URL(fileURLWithPath: path))
        try AtomicFileWriter.write(Data("new".utf8), to: path, mode: 0o640)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "new")
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o640)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["r.json"])
        #expect(throws: AtomicFileWriter.Failure.self) {
            try AtomicFileWriter.write(Data(), to: directory.appendingPathComponent("missing/r.json").path)
        }
    }
}
