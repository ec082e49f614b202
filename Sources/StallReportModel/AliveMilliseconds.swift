/// How long a session's monitor is known to have run, in whole milliseconds since its start
/// (monotonic clock), written as a string of exactly ``digits`` decimal digits
/// (`"000000012345"`).
///
/// The width never changes, so the monitor overwrites the digits in place in the record's file
/// between heartbeats (one small write, no new file, no `fsync`): a session that ends without a
/// clean stop is dated by its last overwrite, not by its last heartbeat. Whatever mix of old and
/// new digits a reader meets while the monitor overwrites them still decodes.
public struct AliveMilliseconds: Codable, Sendable, Hashable, Comparable {
    /// The number of digits the monitor writes (up to about 31 years).
    public static let digits = 12
    /// The largest value: twelve nines.
    public static let largest: UInt64 = 999_999_999_999

    /// The milliseconds.
    public let value: UInt64

    /// A value in milliseconds, saturated at ``largest``.
    public init(_ value: UInt64) {
        self.value = min(value, Self.largest)
    }

    /// The value as written: ``digits`` ASCII digits with leading zeros.
    public var text: String {
        let plain = String(value)
        return String(repeating: "0", count: max(0, Self.digits - plain.utf8.count)) + plain
    }

    /// Decodes 1 to 18 ASCII digits; anything else is not a value a monitor writes.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard (1...18).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let value = UInt64(text)
        else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "aliveMs must be a string of 1 to 18 decimal digits")
        }
        self.init(value)
    }

    /// Encodes ``text``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }

    /// Orders by value.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.value < rhs.value }
}
