import Foundation
import StallReportKitTestSupport
import Testing

@testable import StallReportModel

/// ``CompactJSONEncoder`` writes the bytes `ReportCoding.makeEncoder(pretty: false)` writes: the
/// monitor's report files stay what every reader (and `stallreport symbolicate`) expects.
@Suite("Compact JSON encoder")
struct CompactJSONEncoderTests {
    private func expectSameBytes<T: Encodable>(
        _ value: T, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let expected = try ReportCoding.makeEncoder(pretty: false).encode(value)
        let actual = try CompactJSONEncoder().encode(value)
        #expect(
            String(decoding: actual, as: UTF8.self) == String(decoding: expected, as: UTF8.self), comment,
            sourceLocation: sourceLocation)
        #expect(actual == expected, comment, sourceLocation: sourceLocation)
    }

    @Test("stall reports, pool stalls and blocking-call reports: JSONEncoder's bytes")
    func reports() throws {
        var report = ReportFixtures.report(
            appSymbols: ["App.spin()", "App.\"quoted\" / slashed()", "App.ünïcode()"], durationMs: 1_234.567)
        report.samples[1].note = "a note\nwith\ta newline and \u{1} a control"
        report.samples[2].asyncCallers = [0, 1]
        try expectSameBytes(report, "a RunLoop stall")
        try expectSameBytes(
            ReportFixtures.report(
                appSymbols: ["App.read()"], durationMs: 300, status: .inProgress, classification: .blocked,
                syscall: "read"),
            "an in-progress blocked stall")
        try expectSameBytes(
            ReportFixtures.poolStall(
                durationMs: 812.25, thresholdMs: 100, threadName: "pool worker", frames: report.frames,
                representativeStack: [0, 1], representativeAsyncCallers: [1], samples: report.samples,
                images: report.images),
            "a pool stall")
        let site = BlockingCallsReport.CallSite(
            call: "usleep", loopKind: "concurrencyPool", fingerprint: "abc", callSite: "handler()", count: 3,
            totalMs: 12.5, maxMs: 6.25, durationsMs: [3.125, 3.125, 6.25], threads: [42, 43],
            stack: [.init(address: "0x10", symbol: "handler()", file: "a.swift", line: 3)])
        let blocking = BlockingCallsReport(
            id: "r1", startedAt: Date(timeIntervalSince1970: 1_800_000_000.123), intervalMs: 60_000, thresholdMs: 10,
            process: report.process, callSites: [site], omittedCallSites: 1, droppedCalls: 2,
            tags: ["b": "2", "a": "1"])
        try expectSameBytes(blocking, "a blocking-calls report")
    }

    struct Scalars: Encodable {
        var int = Int.min
        var int8 = Int8.min
        var int16 = Int16.max
        var int32 = Int32.min
        var int64 = Int64.max
        var uint = UInt.max
        var uint8 = UInt8.max
        var uint16 = UInt16.max
        var uint32 = UInt32.max
        var uint64 = UInt64.max
        var float: Float = 0.1
        var floatWhole: Float = 3
        var double = 0.1
        var bool = true
        var no = false
        var present: Int? = 7
        var absent: Int? = nil
        var date = Date(timeIntervalSince1970: 1_772_366_400.196)
        var url = URL(string: "https://example.com/a/b?c=d")!
        var data = Data([0, 1, 2, 250, 255])
        var decimal = Decimal(string: "12.3400")!
        var nested = [[1, 2], [], [3]]
        var byInt: [Int: String] = [3: "three", 10: "ten", -1: "minus one"]
        var empty: [String: Int] = [:]
    }

    @Test("every scalar type, optionals, dates, URLs, data, decimals, nested and keyed-by-Int collections")
    func scalars() throws {
        try expectSameBytes(Scalars())
    }

    @Test("strings: every control character, quotes, backslashes, slashes, DEL, separators and emoji")
    func strings() throws {
        let controls = String(decoding: (0..<0x20).map { UInt8($0) }, as: UTF8.self)
        try expectSameBytes([controls, "\"\\/", "\u{7F}\u{2028}\u{2029}", "é e\u{301} 👩‍💻", ""])
    }

    @Test("keys sort as JSONEncoder sorts them: by their UTF-8 bytes (case, digits, punctuation, non-ASCII, not NFC)")
    func keyOrder() throws {
        let keys = [
            "threadState", "threads", "a10", "a9", "B", "a", "b", "_x", "Z", "é", "f", "ab", "aB", "a-b",
            "a_b", "", " ", "zz", "Ω", "😀", "a\"b", "a\\b", "a/b", "a\nb",
            // Not in NFC: String's `<` would put these elsewhere than their bytes do.
            "e\u{301}x", "éa", "A\u{30A}b", "Å",
        ]
        try expectSameBytes(Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, $0) }))
    }

    @Test("doubles across magnitudes, signs and the six-decimal fast path's edges")
    func doubles() throws {
        var values: [Double] = [
            0, -0.0, 1, -1, 0.1, 0.001, 0.000_999_9, 0.0005, 1e-7, 1e20, 3_003.413, 123_456_789.123,
            999_999_999.999_999,
            1_000_000_000.5, 1e15, 9.999_999_999_999_99e14, .leastNonzeroMagnitude, .greatestFiniteMagnitude,
            .leastNormalMagnitude, -5.5, 2.5e-3, 0.1 + 0.2, 1.0 / 3.0,
        ]
        var generator = SplitMix64(seed: 0x5EED)
        for _ in 0..<4_000 {
            let bits = generator.next()
            let exponent = Double(Int(bits % 40) - 12)
            let mantissa = Double(bits >> 11) / Double(1 << 53)
            var value = mantissa * pow(10, exponent)
            if bits & 1 == 1 { value = (value * 1_000).rounded() / 1_000 }  // milliseconds, as the monitor writes
            if bits & 2 == 2 { value = -value }
            values.append(value)
        }
        try expectSameBytes(values)
        try expectSameBytes(values.map { Float($0) }.filter(\.isFinite), "as Float")
    }

    /// A type that uses every container the protocols offer, sets a key twice and asks for its
    /// container twice.
    struct Containers: Encodable {
        enum Keys: String, CodingKey { case a, b, c, d, e }

        func encode(to encoder: any Encoder) throws {
            var keyed = encoder.container(keyedBy: Keys.self)
            try keyed.encode(1, forKey: .a)
            try keyed.encode("again", forKey: .a)
            var inner = keyed.nestedContainer(keyedBy: Keys.self, forKey: .b)
            try inner.encodeNil(forKey: .c)
            var list = keyed.nestedUnkeyedContainer(forKey: .c)
            try list.encode(1.5)
            try list.encodeNil()
            var deeper = list.nestedContainer(keyedBy: Keys.self)
            try deeper.encode(true, forKey: .d)
            var deepest = list.nestedUnkeyedContainer()
            try deepest.encode("x")
            var single = list.superEncoder().singleValueContainer()
            try single.encode(9)
            try Date(timeIntervalSince1970: 0).encode(to: keyed.superEncoder())
            try [1, 2].encode(to: keyed.superEncoder(forKey: .e))
            var same = encoder.container(keyedBy: Keys.self)
            try same.encode(Int8(3), forKey: .d)
        }
    }

    @Test("nested, super and repeated containers, and a key encoded twice")
    func containers() throws {
        try expectSameBytes(Containers())
        try expectSameBytes([Containers(), Containers()], "inside an array")
    }

    @Test(
        "a number JSON cannot hold is refused, as JSONEncoder refuses it",
        arguments: [Double.nan, .infinity, -.infinity])
    func nonFinite(value: Double) {
        #expect(throws: EncodingError.self) { try ReportCoding.makeEncoder(pretty: false).encode(["x": value]) }
        #expect(throws: EncodingError.self) { try CompactJSONEncoder().encode(["x": value]) }
        #expect(throws: EncodingError.self) { try CompactJSONEncoder().encode([Float(value)]) }
    }
}
