import Foundation
import Testing

@testable import StallReportKit

@Suite("Export formats")
struct ExportFormatTests {
    /// A JSON number as a Double, whether it was written as an integer or not.
    static func number(_ value: Any?) -> Double? {
        (value as? NSNumber)?.doubleValue
    }

    @Test("Folded lines parse as 'stack count', root first, and counts add up to the sampled time in µs")
    func folded() throws {
        let text = FoldedExport.render(ProfileFixtures.profiles)
        let lines = text.split(separator: "\n").map(String.init)
        var total = 0
        for line in lines {
            let space = try #require(line.lastIndex(of: " "))
            let count = try #require(Int(line[line.index(after: space)...]), "\(line)")
            let frames = line[..<space].split(separator: ";", omittingEmptySubsequences: false)
            #expect(!frames.contains(""), "empty frame in \(line)")
            total += count
        }
        #expect(total == Int(ProfileFixtures.sampledMs * 1000))
        #expect(lines.contains("[no stack] 25000"))
        #expect(lines.contains("[syscall nanosleep, not unwound];__lll_lock_wait 30000"))
        #expect(lines.contains("CFRunLoopRunSpecific;__CFRunLoopDoTimer;App.tick();App.spin();__lll_lock_wait 100000"))
        #expect(lines == lines.sorted())
    }

    @Test("A ';' inside a name becomes '；' and creates no phantom frame")
    func foldedSemicolon() throws {
        let report = ProfileFixtures.report(["App.parse(a;b)", "App.tick()"], stack: 2)
        let text = FoldedExport.render([StallProfile(report: report, path: "/r/p.json")])
        let line = try #require(text.split(separator: "\n").first)
        let frames = line[..<line.lastIndex(of: " ")!].split(separator: ";")
        #expect(frames.count == 5)
        #expect(frames.contains("App.parse(a\u{FF1B}b)"))
        #expect(FoldedExport.clean("a\nb\tc") == "a b c")
    }

    @Test(
        "speedscope: the stacks written by hand make the bytes JSONEncoder makes of the whole file, even with a name like the key"
    )
    func speedscopeBytes() throws {
        let tricky = ProfileFixtures.report(["App.\"samples\":[]()", "App.tick()"], stack: 5, syscall: 2, none: 1)
        let profiles = ProfileFixtures.profiles + [StallProfile(report: tricky, path: "/r/tricky.json")]
        let data = try SpeedscopeExport.render(profiles, name: "stalls", exporter: "test")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let whole = try encoder.encode(SpeedscopeExport.make(profiles, name: "stalls", exporter: "test"))
        #expect(data == whole, "\(String(decoding: data, as: UTF8.self))\n\(String(decoding: whole, as: UTF8.self))")
        #expect(String(decoding: data, as: UTF8.self).contains(#"\"samples\":[]"#), "the name is in the file, escaped")
    }

    @Test("speedscope: schema, one merged sampled profile, samples and weights match, indices in range")
    func speedscope() throws {
        let data = try SpeedscopeExport.render(ProfileFixtures.profiles, name: "stalls", exporter: "test")
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(json["$schema"] as? String == "https://www.speedscope.app/file-format-schema.json")
        let frames = try #require((json["shared"] as? [String: Any])?["frames"] as? [[String: Any]])
        #expect(frames.allSatisfy { $0["name"] is String })
        let profiles = try #require(json["profiles"] as? [[String: Any]])
        #expect(profiles.count == 1)
        let profile = profiles[0]
        #expect(profile["type"] as? String == "sampled")
        #expect(profile["unit"] as? String == "milliseconds")
        let samples = try #require(profile["samples"] as? [[Int]])
        let weights = try #require((profile["weights"] as? [Any])?.compactMap(Self.number))
        #expect(samples.count == weights.count && (profile["weights"] as? [Any])?.count == weights.count)
        #expect(samples.allSatisfy { stack in !stack.isEmpty && stack.allSatisfy { frames.indices.contains($0) } })
        #expect(weights.reduce(0, +) == ProfileFixtures.sampledMs)
        #expect(Self.number(profile["endValue"]) == ProfileFixtures.sampledMs)
        // Consecutive equal stacks of a stall are merged: spin (stack, none), wait (stack, syscall).
        #expect(weights == [100, 25, 40, 30])
        #expect(frames[samples[0][0]]["name"] as? String == "CFRunLoopRunSpecific")
    }

    @Test("Chrome trace: one X event per stall at its real time on its thread, metadata names tracks")
    func chromeTrace() throws {
        let data = try ChromeTraceExport.render(ProfileFixtures.profiles)
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let events = try #require(json["traceEvents"] as? [[String: Any]])
        for event in events {
            for key in ["ph", "ts", "pid", "tid", "name"] { #expect(event[key] != nil, "\(key) missing in \(event)") }
        }
        let stalls = events.filter { $0["ph"] as? String == "X" }
        #expect(stalls.count == 2)
        let first = stalls[0]
        #expect(first["ts"] as? Int == 1_772_366_400_000_000)
        #expect(first["dur"] as? Int == 1_000_000)
        #expect(first["pid"] as? Int == 4242)
        #expect(first["tid"] as? Int == 4243)
        #expect(first["name"] as? String == "stall 1000 ms: App.spin()")
        let args = try #require(first["args"] as? [String: Any])
        #expect(args["fingerprint"] as? String == ProfileFixtures.profiles[0].fingerprint)
        #expect(Self.number(args["sampledMs"]) == 125)
        #expect((args["stack"] as? [String])?.first == "__lll_lock_wait")
        #expect((args["stack"] as? [String])?[1] == "App.spin() (Stalls.swift)")
        #expect(stalls[1]["ts"] as? Int == 1_772_366_460_000_000)
        let metadata = events.filter { $0["ph"] as? String == "M" }
        #expect(metadata.contains { $0["name"] as? String == "thread_name" && $0["tid"] as? Int == 4243 })
        #expect(metadata.contains { $0["name"] as? String == "process_name" && $0["pid"] as? Int == 4242 })
    }
}
