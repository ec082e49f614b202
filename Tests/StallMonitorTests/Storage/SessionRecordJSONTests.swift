import Foundation
import StallReportModel
import Testing

@testable import StallMonitor

/// The session record is written by a small hand-made encoder (an idle monitor does not touch
/// JSONEncoder's code); its bytes must be the ones `ReportCoding.makeEncoder()` writes.
@Suite("Session record encoding")
struct SessionRecordJSONTests {
    private static func record(
        appVersion: String?, stopped: Bool, dropped: [String: Int], hostName: String = "build-7",
        monitoredMs: Double = 6485.559797, thresholdMs: Double = 250,
        aliveMs: AliveMilliseconds? = AliveMilliseconds(6485)
    ) -> SessionRecord {
        let start = Date(timeIntervalSince1970: 1_795_000_000.123)
        return SessionRecord(
            pid: 4242, processStartTicks: 1_186_067, hostName: hostName, executableName: "my app/worker",
            appVersion: appVersion, startedAt: start, lastHeartbeatAt: start.addingTimeInterval(61.5), aliveMs: aliveMs,
            stoppedAt: stopped ? start.addingTimeInterval(62) : nil, cleanStop: stopped, monitoredMs: monitoredMs,
            thresholdMs: thresholdMs, spans: 1_234_567, stalls: 3, reportsWritten: 2, reportsDropped: dropped)
    }

    private static func expectSameBytes(
        _ record: SessionRecord, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let expected = try ReportCoding.makeEncoder().encode(record)
        let actual = SessionRecordJSON.encode(record)
        #expect(
            String(decoding: actual, as: UTF8.self) == String(decoding: expected, as: UTF8.self),
            sourceLocation: sourceLocation)
        if record.monitoredMs <= SessionRecord.largestMonitoredMilliseconds {
            #expect(try SessionRecord.decode(from: Data(actual)) == record, sourceLocation: sourceLocation)
        } else {
            // Written as any number is, but refused by readers as out of range (over 31,700 years).
            #expect(throws: (any Error).self, sourceLocation: sourceLocation) {
                try SessionRecord.decode(from: Data(actual))
            }
        }
    }

    @Test("running and stopped records, with and without an app version, with no and every drop reason")
    func sameBytesAsJSONEncoder() throws {
        let everyReason = [
            "reportWrite": 2, "reportEncoding": 1, "rateLimitedToSummary": 40, "deletedForQuota": 7,
            "watchdogStarved": 1,
        ]
        for appVersion in [nil, "2.4.1 (812)"] as [String?] {
            for stopped in [false, true] {
                for dropped in [[:], ["reportWrite": 1], everyReason] {
                    try Self.expectSameBytes(Self.record(appVersion: appVersion, stopped: stopped, dropped: dropped))
                }
            }
        }
        for alive in [nil, AliveMilliseconds(0), AliveMilliseconds(AliveMilliseconds.largest)] {
            try Self.expectSameBytes(Self.record(appVersion: nil, stopped: false, dropped: [:], aliveMs: alive))
        }
    }

    @Test("aliveMs's digits are found where the encoder wrote them, also when a string value spells the key")
    func aliveDigitsOffset() throws {
        let tricky = "\"aliveMs\" : \"999999999999\""
        var record = Self.record(
            appVersion: tricky, stopped: false, dropped: [:], hostName: tricky, aliveMs: AliveMilliseconds(42))
        var bytes = SessionRecordJSON.encode(record)
        let offset = try #require(SessionRecordJSON.aliveDigitsOffset(in: bytes))
        #expect(String(decoding: bytes[offset..<(offset + AliveMilliseconds.digits)], as: UTF8.self) == "000000000042")
        // Overwritten in place as the monitor does: the record reads back with the new value.
        bytes.replaceSubrange(
            offset..<(offset + AliveMilliseconds.digits), with: Array(AliveMilliseconds(7_654_321).text.utf8))
        record.aliveMs = AliveMilliseconds(7_654_321)
        #expect(try SessionRecord.decode(from: Data(bytes)) == record)
        #expect(
            SessionRecordJSON.aliveDigitsOffset(
                in: SessionRecordJSON.encode(
                    Self.record(appVersion: tricky, stopped: false, dropped: [:], aliveMs: nil))) == nil)
    }

    @Test("strings that need escaping and numbers of every shape")
    func escapingAndNumbers() throws {
        let control = String(decoding: (0..<32).map { UInt8($0) }, as: UTF8.self)
        for host in ["quote\" back\\slash /path", control, "ünïcødé 🚀 \u{7F}", ""] {
            try Self.expectSameBytes(Self.record(appVersion: host, stopped: false, dropped: [:], hostName: host))
        }
        // Written from integer millionths (0.001 up to 10⁹, at most six decimals) and through
        // `description` (the rest).
        let millionths: [Double] = [
            0, 1, 250, 0.1, 0.001, 0.0015, 6485.559, 6485.559797, 123_456_789.125, 999_999_999.999999,
        ]
        let others: [Double] = [0.3 - 0.1, 1e-7, 0.000999, 1e9 + 0.5, 1e16, 3.0e21, 2.5e-300, 6485.5597971, 1.0 / 3.0]
        for value in millionths + others {
            try Self.expectSameBytes(
                Self.record(appVersion: nil, stopped: true, dropped: [:], monitoredMs: value, thresholdMs: value))
        }
        // Microseconds and nanoseconds as the recorder makes them, spread over every magnitude.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<300 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let integer = (state >> 11) % (UInt64(1) << (state % 50))
            let value = state % 2 == 0 ? Double(integer) / 1_000 : Double(integer) / 1_000_000
            try Self.expectSameBytes(
                Self.record(appVersion: nil, stopped: false, dropped: [:], monitoredMs: value, thresholdMs: value))
        }
    }
}
