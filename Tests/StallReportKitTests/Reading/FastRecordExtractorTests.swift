import Foundation
import StallReportKitTestSupport
import Testing

@testable import StallReportKit

/// The fast path (``FastRecordExtractor``) must give exactly the record the full decoder gives,
/// or step aside (``FastPathMiss``) so that the full decoder decides; never a record for a file
/// the full decoder rejects.
@Suite("fast record extraction")
struct FastRecordExtractorTests {
    /// The full decoder's record, or nil when it rejects the bytes.
    private static func full(_ data: Data, path: String = "/r.json") -> StallRecord? {
        guard case .success(let report) = ReportLoader().load(data: data) else { return nil }
        return StallRecord(report: report, path: path)
    }

    private static func fast(_ data: Data, path: String = "/r.json") -> StallRecord? {
        var extractor = FastRecordExtractor(depthLimit: ReportLoader().maxNestingDepth)
        return data.withUnsafeBytes { bytes in try? extractor.record(from: bytes, path: path) }
    }

    /// Checks the contract for one input; returns whether the fast path accepted it.
    @discardableResult
    private static func check(_ data: Data, _ name: String) -> Bool {
        let reference = full(data)
        guard let record = fast(data) else { return false }
        #expect(reference != nil, "\(name): fast path accepted a file the full decoder rejects")
        #expect(record == reference, "\(name): fast and full records differ")
        return true
    }

    private static func json(_ report: StallReport) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: report.encoded()) as? [String: Any])
    }

    private static func data(_ object: [String: Any], sorted: Bool = false) throws -> Data {
        try JSONSerialization.data(withJSONObject: object, options: sorted ? [.sortedKeys] : [])
    }

    private static var sample: StallReport {
        var report = ReportFixtures.report(
            appSymbols: ["App.refresh()", "App.load(_:)"], durationMs: 731.125, syscall: "futex")
        report.scene = "feed"
        report.rateLimited = false
        report.tags = ["build": "ci"]
        report.process.startTicks = 123_456
        return report
    }

    @Test("every fuzz corpus and regression input: same record as the full decoder, or left to it")
    func corpus() throws {
        var accepted = 0
        var total = 0
        for folder in ["Tests/Fuzz/corpus", "Tests/Fuzz/regressions"] {
            let directory = PackageRoot.url.appendingPathComponent(folder)
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() {
                let data = try Data(contentsOf: directory.appendingPathComponent(name))
                total += 1
                if Self.check(data, name) { accepted += 1 }
            }
        }
        #expect(total > 100)
        // Most of the corpus is mutated garbage; the valid ones must take the fast path.
        #expect(accepted > 0)
    }

    @Test("pretty, compact, reordered, escaped and older reports take the fast path with the same record")
    func variants() throws {
        let report = Self.sample
        #expect(Self.check(try report.encoded(pretty: true), "pretty"))
        #expect(Self.check(try report.encoded(pretty: false), "compact"))
        #expect(Self.check(try Self.data(Self.json(report)), "unsorted keys"))

        var reversed = "{"
        let object = try Self.json(report)
        for (index, key) in object.keys.sorted().reversed().enumerated() {
            let value = try JSONSerialization.data(withJSONObject: object[key]!, options: [.fragmentsAllowed])
            reversed += (index == 0 ? "" : " ,\n\t") + "\"\(key)\" : " + String(decoding: value, as: UTF8.self)
        }
        #expect(Self.check(Data((reversed + "}\r\n").utf8), "reversed keys and whitespace"))

        var escaped = report
        escaped.fingerprint = "quote\" back\\slash /slash \u{e9}t\u{e9} \u{1F600} tab\t"
        escaped.frames[1].symbol = "App.\u{3c0}(_:) \"quoted\""
        escaped.frames[1].file = "/src/\u{e9}/a.swift"
        escaped.scene = "sc\u{e8}ne\n2"
        #expect(Self.check(try escaped.encoded(), "escapes"))
        // Escapes the encoder does not write: \u sequences (with a surrogate pair), \/ and an escaped key.
        var text = String(decoding: try report.encoded(pretty: false), as: UTF8.self)
        text = text.replacingOccurrences(
            of: "\"scene\":\"feed\"", with: "\"sc\\u0065ne\":\"f\\u00e9\\ud83d\\ude00\\/ed\"")
        #expect(Self.check(Data(text.utf8), "unicode escapes"))
        #expect(Self.fast(Data(text.utf8))?.scene == "f\u{e9}\u{1F600}/ed")

        var older = try Self.json(report)
        for key in ["scene", "tags", "rateLimited", "omittedSamples", "processStoppedMs", "machineSuspendedMs"] {
            older[key] = nil
        }
        var process = try #require(older["process"] as? [String: Any])
        process["startTicks"] = nil
        process["appVersion"] = nil
        older["process"] = process
        #expect(Self.check(try Self.data(older, sorted: true), "older report"))
        var nulls = try Self.json(report)
        nulls["scene"] = NSNull()
        nulls["rateLimited"] = NSNull()
        #expect(Self.check(try Self.data(nulls), "optional keys as null"))

        var future = report
        future.classification = StallClassification(rawValue: "gpuWait")
        future.status = StallStatus(rawValue: "abandoned")
        #expect(Self.check(try future.encoded(), "unknown classification and status"))
        #expect(Self.fast(try future.encoded())?.classification.rawValue == "gpuWait")

        var unknown = try Self.json(report)
        unknown["futureField"] = ["nested": [1, 2.5e-3, true, NSNull(), ["deep": ["x"]]], "text": "a\"b"]
        var frames = try #require(unknown["frames"] as? [[String: Any]])
        frames[0]["futureFrameField"] = [1, 2, 3]
        unknown["frames"] = frames
        var loop = try #require(unknown["loop"] as? [String: Any])
        loop["futureLoopField"] = ["a": 1]
        unknown["loop"] = loop
        #expect(Self.check(try Self.data(unknown), "unknown keys"))

        var rateLimited = report
        rateLimited.rateLimited = true
        rateLimited.samples = []
        rateLimited.omittedSamples = 12
        #expect(Self.check(try rateLimited.encoded(), "rate limited"))
        #expect(Self.fast(try rateLimited.encoded())?.rateLimited == true)

        var symbolless = report
        for index in symbolless.frames.indices {
            symbolless.frames[index].symbol = index == 0 ? "" : nil
            symbolless.frames[index].inApp = false
        }
        #expect(Self.check(try symbolless.encoded(), "no symbols, no app frames"))

        var fractional = report
        for seconds in [0.0, 0.001, 0.196, 0.999, 1_790_000_123.456, 4_102_444_800.5] {
            fractional.startedAt = Date(timeIntervalSince1970: seconds)
            #expect(Self.check(try fractional.encoded(), "date \(seconds)"))
        }
    }

    @Test("invalid or unusual reports are left to the full decoder")
    func misses() throws {
        let report = Self.sample
        let object = try Self.json(report)
        func mutated(_ change: (inout [String: Any]) -> Void) throws -> Data {
            var copy = object
            change(&copy)
            return try Self.data(copy)
        }
        /// The report with `field` of row `row` of the array of objects `table` set to `value` (nil: removed).
        func mutated(row: Int, of table: String, setting field: String, to value: Any?) throws -> Data {
            try mutated { object in
                var rows = object[table] as! [[String: Any]]
                rows[row][field] = value
                object[table] = rows
            }
        }
        /// The report with `field` of the object `member` set to `value`.
        func mutated(member: String, setting field: String, to value: Any) throws -> Data {
            try mutated { object in
                var fields = object[member] as! [String: Any]
                fields[field] = value
                object[member] = fields
            }
        }
        var cases: [(String, Data)] = []
        cases.append(("negative duration", try mutated { $0["durationMs"] = -1 }))
        cases.append(("zero threshold", try mutated { $0["thresholdMs"] = 0 }))
        cases.append(("schema version 2", try mutated { $0["schemaVersion"] = 2 }))
        cases.append(("no fingerprint", try mutated { $0["fingerprint"] = nil }))
        cases.append(("fingerprint null", try mutated { $0["fingerprint"] = NSNull() }))
        cases.append(("duration as text", try mutated { $0["durationMs"] = "731" }))
        cases.append(("kind is a number", try mutated { $0["kind"] = 3 }))
        cases.append(("bad date", try mutated { $0["startedAt"] = "yesterday" }))
        cases.append(("image path missing", try mutated(row: 2, of: "images", setting: "path", to: nil)))
        cases.append(("frame index past the table", try mutated { $0["representativeStack"] = [0, 99] }))
        cases.append(
            (
                "sample frame past the table",
                try mutated(row: report.samples.count - 1, of: "samples", setting: "frames", to: [0, 42])
            ))
        cases.append(("image index past the table", try mutated(row: 1, of: "frames", setting: "image", to: 7)))
        cases.append(("line zero", try mutated(row: 1, of: "frames", setting: "line", to: 0)))
        cases.append(("pid zero", try mutated(member: "process", setting: "pid", to: 0)))
        cases.append(("negative skipped count", try mutated(member: "sampling", setting: "skipped", to: ["busy": -1])))
        cases.append(("not an object", Data("[1,2]".utf8)))
        let compact = try report.encoded(pretty: false)
        cases.append(("truncated", compact.prefix(compact.count / 2)))
        cases.append(("trailing garbage", compact + Data("x".utf8)))
        cases.append(
            (
                "duplicate key",
                Data(
                    String(decoding: compact, as: UTF8.self).replacingOccurrences(
                        of: "{\"classification\"", with: "{\"durationMs\":1,\"classification\""
                    ).utf8)
            ))
        var invalidUTF8 = Data(
            String(decoding: compact, as: UTF8.self).replacingOccurrences(
                of: "\"scene\":\"feed\"", with: "\"scene\":\"f__d\""
            ).utf8)
        if let range = invalidUTF8.range(of: Data("f__d".utf8)) {
            invalidUTF8.replaceSubrange(range, with: [0x66, 0xC3, 0x28, 0x64])
        }
        cases.append(("invalid UTF-8", invalidUTF8))
        cases.append(
            (
                "control character in a string",
                Data(
                    String(decoding: compact, as: UTF8.self).replacingOccurrences(
                        of: "\"scene\":\"feed\"", with: "\"scene\":\"fe\u{1}ed\""
                    ).utf8)
            ))
        cases.append(
            (
                "lone surrogate",
                Data(
                    String(decoding: compact, as: UTF8.self).replacingOccurrences(
                        of: "\"scene\":\"feed\"", with: "\"scene\":\"\\ud83d\""
                    ).utf8)
            ))
        for (name, data) in cases {
            #expect(Self.fast(data) == nil, "\(name): the fast path must leave it to the full decoder")
            Self.check(data, name)
        }
    }

    @Test("the collector gives the same summary through the fast path as through the full decoder")
    func collectorAgrees() throws {
        let directory = try ReportFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let symbols = [["App.spin(milliseconds:)"], ["App.waitOnLock()", "App.refresh()"], ["App.parse\u{e9}(_:)"]]
        for index in 0..<120 {
            var report = ReportFixtures.report(
                appSymbols: symbols[index % 3], durationMs: Double(250 + (index * 37) % 900) + 0.125,
                startedAt: Date(timeIntervalSince1970: 1_772_366_400.25 + Double(index)),
                status: index % 5 == 0 ? .inProgress : .ended)
            report.scene = index % 2 == 0 ? "s\(index % 4)" : nil
            try report.encoded(pretty: index % 2 == 0).write(
                to: directory.appendingPathComponent(String(format: "r%04d.json", index)))
        }
        try Data("{\"schemaVersion\":1}".utf8).write(to: directory.appendingPathComponent("not-a-report.json"))
        let files = ReportScanner().scan([directory.path]).files
        var reader = FastRecordReader(loader: ReportLoader())
        defer { reader.release() }
        var fastProblems: [String] = []
        for path in files {
            let viaFull = ReportLoader().load(path: path).map { StallRecord(report: $0, path: path) }
            let viaReader = reader.record(path: path)
            #expect(viaFull == viaReader, "\(path)")
            if case .failure(let error) = viaReader { fastProblems.append(error.description) }
        }
        #expect(reader.fastCount == 120)
        #expect(reader.fullCount == 1)
        #expect(fastProblems.count == 1)
        let collected = ReportCollector(workers: 2).collect([directory.path])
        #expect(collected.reportsRead == 120)
        #expect(collected.problems.map(\.message) == fastProblems)
    }
}
