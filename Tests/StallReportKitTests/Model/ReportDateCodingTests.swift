import Foundation
import StallReportModel
import Testing

/// Report dates are written and read without Foundation's format styles (which load ICU into
/// the monitored process): the text must be exactly what the format style gave.
@Suite("Report date coding")
struct ReportDateCodingTests {
    /// The format style's text for `milliseconds` since 1970 (the writer before it did its own).
    private func reference(_ milliseconds: Int64) -> String {
        let seconds = (Double(milliseconds) / 1000).rounded(.down)
        let whole = Date(timeIntervalSince1970: seconds).formatted(Date.ISO8601FormatStyle())
        let fraction = milliseconds - Int64(seconds) * 1000
        return whole.dropLast() + "." + String(fraction + 1000).dropFirst() + "Z"
    }

    @Test(
        "formatDate gives the format style's text, leap days and times before 1970 and before the Gregorian reform included; parseDate reads it back to the millisecond"
    )
    func matchesFormatStyle() {
        var generator = SystemRandomNumberGenerator()
        var cases: [Int64] = [
            0, -1, 1, 951_782_400_000, 951_868_799_999, 4_107_542_400_000, 4_107_456_000_000,
            -11_676_096_000_000, -11_676_096_000_001, 253_402_300_799_999, 1_795_313_895_123,
        ]
        for _ in 0..<2_000 { cases.append(Int64.random(in: -2_208_988_800_000...4_102_444_800_000, using: &generator)) }
        for milliseconds in cases {
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            let text = ReportCoding.formatDate(date)
            #expect(text == reference(milliseconds), "\(milliseconds)")
            let parsed = ReportCoding.parseDate(text)
            #expect(parsed.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } == milliseconds, "\(text)")
        }
    }

    @Test("parseDate accepts other fractions and no fraction, and rejects what is not a date")
    func parsing() {
        #expect(ReportCoding.parseDate("2026-11-22T02:18:15Z")?.timeIntervalSince1970 == 1_795_313_895)
        #expect(ReportCoding.parseDate("2026-11-22T02:18:15.5Z")?.timeIntervalSince1970 == 1_795_313_895.5)
        #expect(
            abs(
                (ReportCoding.parseDate("2026-11-22T02:18:15.123456Z")?.timeIntervalSince1970 ?? 0)
                    - 1_795_313_895.123456) < 1e-6)
        for bad in ["", "2026-11-22", "2026-11-22T02:18:15.Z", "x026-11-22T02:18:15Z"] {
            #expect(ReportCoding.parseDate(bad) == nil, "\(bad)")
        }
    }
}
