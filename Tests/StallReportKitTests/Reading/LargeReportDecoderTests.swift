import Foundation
import StallReportKitTestSupport
import Testing

@testable import StallReportKit
@testable import StallReportModel

/// ``LargeReportDecoder`` gives the ordinary decoder's report for the plain shape and declines
/// (so the ordinary decoder reports the problem) anything else.
@Suite("Large report decoding")
struct LargeReportDecoderTests {
    /// A fixture report's JSON with its samples replaced by `samples` (JSON objects).
    static func json(samples: [[String: Any]]) throws -> Data {
        let report = ReportFixtures.report(appSymbols: ["App.spin()", "App.work()"], durationMs: 600)
        var object = try #require(try JSONSerialization.jsonObject(with: report.encoded()) as? [String: Any])
        object["samples"] = samples
        return try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }

    /// Samples with every field, nulls, missing optional fields, unknown keys (nested too),
    /// escapes and numbers with exponents.
    static func variedSamples() -> [[String: Any]] {
        (0..<300).map { index in
            var sample: [String: Any] = [
                "offsetMs": Double(index) * 10.5, "kind": ["stack", "syscall", "none", "future"][index % 4],
                "threadState": index % 2 == 0 ? "R" : "S",
                "frames": index % 5 == 0 ? [] : [index % 5, (index + 1) % 5, (index + 3) % 5],
            ]
            if index % 3 == 0 { sample["syscall"] = "nanosleep" }
            if index % 7 == 0 { sample["note"] = "a note with \"quotes\", a tab\t, é and \u{1B}[2J" }
            if index % 11 == 0 { sample["truncated"] = true }
            if index % 2 == 1 { sample["unwinder"] = "libdw" } else { sample["unwinder"] = NSNull() }
            if index % 4 == 1 { sample["interrupted"] = index % 8 == 1 }
            if index % 6 == 0 {
                sample["asyncCallers"] = [3, 4]
                sample["asyncJobFrames"] = 2
                sample["asyncCallersFromJobStart"] = true
            }
            if index % 9 == 0 { sample["futureKey"] = ["nested": [1, 2, ["deep": "x"]], "n": 1e3] }
            return sample
        }
    }

    @Test("The plain shape decodes to the ordinary decoder's report, nulls, unknown keys and escapes included")
    func sameAsOrdinary() throws {
        let data = try Self.json(samples: Self.variedSamples())
        let ordinary = try StallReport.decode(from: data)
        let fast = try #require(LargeReportDecoder.decode(data, depthLimit: 64, minimumSize: 0))
        #expect(fast == ordinary)
        #expect(fast.samples.count == 300)
        #expect(fast.samples.contains { $0.note?.contains("\u{1B}") == true })
        // Spaces and newlines between the tokens change nothing.
        let pretty = try JSONSerialization.data(
            withJSONObject: JSONSerialization.jsonObject(with: data), options: [.prettyPrinted])
        #expect(LargeReportDecoder.decode(pretty, depthLimit: 64, minimumSize: 0) == ordinary)
    }

    @Test(
        "Anything unusual in a sample is declined; the loader then reports what the ordinary decoder reports",
        arguments: [
            #"{"offsetMs": 1, "threadState": "R", "frames": [0]}"#,  // no kind
            #"{"offsetMs": 1, "kind": "stack", "threadState": "R", "frames": [-1]}"#,  // negative index
            #"{"offsetMs": 1, "kind": "stack", "threadState": "R", "frames": [99]}"#,  // index past the frames
            #"{"offsetMs": -1, "kind": "stack", "threadState": "R", "frames": [0]}"#,  // negative time
            #"{"offsetMs": 1, "kind": 3, "threadState": "R", "frames": [0]}"#,  // wrong type
            #"{"offsetMs": 1, "kind": "stack", "threadState": null, "frames": [0]}"#,  // null for a required key
            #"{"offsetMs": 1, "kind": "stack", "threadState": "R", "frames": [0.5]}"#,  // not an integer
        ])
    func declined(_ badJSON: String) throws {
        let bad = try #require(try JSONSerialization.jsonObject(with: Data(badJSON.utf8)) as? [String: Any])
        let data = try Self.json(samples: Array(Self.variedSamples().prefix(20)) + [bad])
        #expect(LargeReportDecoder.decode(data, depthLimit: 64, minimumSize: 0) == nil)
        let ordinary = Result { () throws(ReportReadError) in try StallReport.decode(from: data) }
        let loaded = ReportLoader().load(data: data)
        switch (ordinary, loaded) {
        case (.failure(let expected), .failure(let error)):
            #expect(error == .read(expected))
        case (.success(let expected), .success(let report)):
            #expect(report == expected)
        default:
            Issue.record("the loader and the ordinary decoder disagree: \(ordinary) vs \(loaded)")
        }
    }

    @Test("A repeated sample key is declined; small files are left to the ordinary decoder")
    func repeatedKeyAndSmallFiles() throws {
        let data = try Self.json(samples: [["offsetMs": 1.0, "kind": "stack", "threadState": "R", "frames": [0]]])
        let text = String(decoding: data, as: UTF8.self).replacingOccurrences(
            of: "\"kind\":\"stack\"", with: "\"kind\":\"stack\",\"kind\":\"none\"")
        #expect(text.contains("\"kind\":\"none\""))
        #expect(LargeReportDecoder.decode(Data(text.utf8), depthLimit: 64, minimumSize: 0) == nil)
        #expect(LargeReportDecoder.decode(data, depthLimit: 64) == nil, "below a MiB")
        #expect(LargeReportDecoder.decode(data, depthLimit: 64, minimumSize: 0) != nil)
    }

    @Test("Equal index arrays of different samples share storage; the loader takes this path for a large file")
    func sharing() throws {
        let samples = (0..<20_000).map { index -> [String: Any] in
            [
                "offsetMs": Double(index), "kind": "stack", "threadState": "R",
                "frames": index % 2 == 0 ? [0, 1, 2] : [1, 2, 3],
            ]
        }
        let data = try Self.json(samples: samples)
        #expect(data.count >= LargeReportDecoder.minimumSize)
        let report = try #require(LargeReportDecoder.decode(data, depthLimit: 64))
        #expect(report == (try StallReport.decode(from: data)))
        let first = try #require(report.samples[0].frameIndices.shared)
        let third = try #require(report.samples[2].frameIndices.shared)
        #expect(first.buffer === third.buffer && first.range == third.range)
        #expect(try ReportLoader().load(data: data).get() == report)
    }
}

/// ``StallReport/encoded(pretty:)`` of a report with many samples encodes them a chunk at a time:
/// the bytes are those of encoding the whole report at once.
@Suite("Chunked report encoding")
struct ChunkedReportEncodingTests {
    @Test(
        "Pretty and compact, chunks of several sizes: the same bytes as JSONEncoder's of the whole report",
        arguments: [true, false])
    func sameBytes(pretty: Bool) throws {
        var report = ReportFixtures.report(appSymbols: ["App.spin()", "App.\"samples\": []()"], durationMs: 600)
        let frames = report.samples[0].frames
        report.samples = (0..<2_345).map { index in
            StallReport.Sample(
                offsetMs: Double(index) * 0.25, kind: index % 3 == 0 ? .syscall : .stack, threadState: "R",
                syscall: index % 3 == 0 ? "nanosleep" : nil, note: index % 7 == 0 ? "a \"note\"\nwith a newline" : nil,
                frames: Array(frames.prefix(1 + index % frames.count)), asyncCallers: index % 5 == 0 ? [0] : nil)
        }
        let whole = try ReportCoding.makeEncoder(pretty: pretty).encode(report)
        let encoder = ReportCoding.makeEncoder(pretty: pretty)
        for chunkSize in [1, 1_000, 2_345, 5_000] {
            let chunked = try ChunkedReportEncoding.encode(report, pretty: pretty, chunkSize: chunkSize) {
                try encoder.encode($0)
            }
            #expect(chunked == whole, "chunks of \(chunkSize)")
            guard !pretty else { continue }
            let compact = try ChunkedReportEncoding.encode(report, pretty: false, chunkSize: chunkSize) {
                try CompactJSONEncoder().encode($0)
            }
            #expect(compact == whole, "CompactJSONEncoder, chunks of \(chunkSize)")
        }
        if !pretty {
            #expect(try report.fileData() == whole)
        }
        #expect(try StallReport.decode(from: whole) == report)
    }
}
