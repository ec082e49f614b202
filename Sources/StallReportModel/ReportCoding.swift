import Foundation

/// The JSON encoding and decoding rules of stall reports: camelCase keys, ISO 8601 dates with
/// milliseconds, sorted keys for stable diffs.
public enum ReportCoding {
    /// An encoder that writes reports as the schema requires.
    public static func makeEncoder(pretty: Bool = true) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(formatDate(date))
        }
        return encoder
    }

    /// A decoder that reads reports, accepting ISO 8601 dates with or without fractional seconds.
    public static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = parseDate(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ISO 8601 date: \(text)")
            }
            return date
        }
        return decoder
    }

    /// Formats a date as ISO 8601 UTC with milliseconds, e.g. `2026-11-22T02:18:15.123Z`,
    /// rounded to the nearest millisecond so that decoding and encoding again gives the same text
    /// (the format style truncates, and a parsed `.196` is often stored as `.19599…`).
    public static func formatDate(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        if milliseconds.magnitude < 9e15, let text = ISO8601UTC.format(milliseconds: Int64(milliseconds)) {
            return text
        }
        let seconds = (milliseconds / 1000).rounded(.down)
        let whole = Date(timeIntervalSince1970: seconds).formatted(Date.ISO8601FormatStyle())
        let fraction = Int(milliseconds - seconds * 1000)
        let padded = String(fraction + 1000).dropFirst()
        return whole.dropLast() + "." + padded + "Z"
    }

    /// Parses an ISO 8601 date with or without fractional seconds.
    public static func parseDate(_ text: String) -> Date? {
        if let date = ISO8601UTC.parse(text) { return date }
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        return try? Date.ISO8601FormatStyle().parse(text)
    }

    /// Formats an address as lowercase `0x…` hex.
    public static func formatAddress(_ address: UInt) -> String {
        "0x" + String(address, radix: 16)
    }

    /// Parses a `0x…` hex address; nil when the text is not one.
    public static func parseAddress(_ text: String) -> UInt? {
        guard text.hasPrefix("0x") || text.hasPrefix("0X") else { return nil }
        return UInt(text.dropFirst(2), radix: 16)
    }
}
