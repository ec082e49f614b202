import Foundation
import StallReportModel
import Testing

/// The one `readdir` loop's order, on real directories: the order of Swift's `String` comparison,
/// for ASCII names (compared as bytes) and for names that are not.
@Suite("Directory names in order")
struct DirectoryNamesTests {
    /// Makes a directory holding empty files named `names`, lists it, and removes it.
    static func listed(_ names: [String]) throws -> [String] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("names-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        for name in names {
            #expect(FileManager.default.createFile(atPath: directory.appendingPathComponent(name).path, contents: nil))
        }
        let listed = try #require(DirectoryNames(directory.path))
        return Array(listed.sorted())
    }

    @Test("ASCII names of different lengths and shared prefixes sort as their Strings do")
    func asciiNames() throws {
        let names = [
            "stall-b.json", "stall-a.json", "stall-a.jso", "stall-a.json~", "Stall-a.json", "a", "ab", "aa", "b", "-",
            "session-20261203T151458.995Z-p9855-2.session", "session-20261203T151458.995Z-p9855.session",
        ]
        #expect(try Self.listed(names) == names.sorted())
    }

    @Test("names that are not all ASCII sort as their Strings do")
    func unicodeNames() throws {
        let names = ["é.json", "e.json", "z.json", "Ω", "ab", "a"]
        #expect(try Self.listed(names) == names.sorted())
    }

    @Test("an empty directory lists nothing")
    func emptyDirectory() throws {
        #expect(try Self.listed([]).isEmpty)
    }
}
