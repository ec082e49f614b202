import Foundation
import StallReportKitTestSupport
import Testing

@testable import StallReportKit

#if canImport(Glibc)
import Glibc
#endif

@Suite("Reading one report file defensively")
struct ReportLoaderTests {
    let directory: URL

    init() throws {
        directory = try ReportFixtures.temporaryDirectory()
    }

    private func file(_ name: String, _ bytes: Data) throws -> String {
        try ReportFixtures.write(bytes, to: directory, name: name).path
    }

    private func failure(_ path: String, loader: ReportLoader = ReportLoader()) -> ReportLoadError? {
        if case .failure(let error) = loader.load(path: path) { return error }
        return nil
    }

    @Test("A real report reads back equal to what was written")
    func roundTrip() throws {
        let report = ReportFixtures.report(appSymbols: ["App.spin(milliseconds:)", "App.tick()"], durationMs: 412.5)
        let url = try ReportFixtures.write(report, to: directory, name: "r.json")
        let loaded = try ReportLoader().load(path: url.path).get()
        #expect(loaded == report)
    }

    @Test("Empty, truncated, binary, non-report and unknown-version files each get their own message")
    func brokenFiles() throws {
        let report = try ReportFixtures.report(appSymbols: ["App.spin()"], durationMs: 300).encoded()
        #expect(failure(try file("empty.json", Data())) == .read(.empty))
        #expect(
            failure(try file("truncated.json", report.prefix(report.count / 2)))?.description
                == "invalid JSON: the document ends early (truncated file?)")
        let garbage = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) })
        #expect(failure(try file("garbage.json", garbage))?.description == "invalid JSON: binary data, not JSON text")
        #expect(
            failure(try file("array.json", Data("[1,2,3]".utf8)))
                == .read(.notAReport("top level is not a JSON object")))
        #expect(
            failure(try file("other.json", Data(#"{"name":"package.json"}"#.utf8)))
                == .read(.notAReport("no schemaVersion")))
        #expect(
            failure(try file("v2.json", Data(#"{"schemaVersion":2,"id":"x"}"#.utf8)))
                == .read(.unsupportedSchemaVersion(2)))
        let missing = failure(try file("partial.json", Data(#"{"schemaVersion":1,"id":"x"}"#.utf8)))
        #expect(missing?.description.hasPrefix("not a stall report: missing key") == true)
    }

    @Test("100 000 nested brackets are refused before decoding; 500 levels decode without crashing")
    func deepNesting() throws {
        let deep = try file("deep.json", Data(repeating: UInt8(ascii: "["), count: 100_000))
        #expect(failure(deep) == .tooDeep(limit: 512))
        let underLimit = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        let shallow = try file("shallow.json", Data(#"{"schemaVersion":1,"x":\#(underLimit)}"#.utf8))
        #expect(failure(shallow)?.description.hasPrefix("not a stall report") == true)
    }

    @Test("Files over the size limit are refused without reading them")
    func sizeLimit() throws {
        let url = directory.appendingPathComponent("big.json")
        #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: 50 * 1024 * 1024)  // sparse 50 MiB
        try handle.close()
        #expect(
            failure(url.path, loader: ReportLoader(maxFileSize: 10 * 1024 * 1024))
                == .tooLarge(size: 50 * 1024 * 1024, limit: 10 * 1024 * 1024))
        // Under the default 64 MiB limit the file is read and judged: NUL bytes are binary.
        #expect(failure(url.path)?.description == "invalid JSON: binary data, not JSON text")
    }

    @Test("A FIFO named *.json does not block the reader")
    func fifo() throws {
        let path = directory.appendingPathComponent("pipe.json").path
        #expect(mkfifo(path, 0o600) == 0)
        #expect(failure(path) == .read(.unreadable("not a regular file")))
    }

    @Test(
        "A file without read permission is reported as unreadable",
        .enabled(if: geteuid() != 0, "root reads mode-000 files"))
    func unreadable() throws {
        let path = try file("locked.json", Data("{}".utf8))
        #expect(chmod(path, 0) == 0)
        #expect(failure(path) == .read(.unreadable("Permission denied")))
    }
}
