/// Strings and numbers written as `ReportCoding.makeEncoder()` writes them (slashes unescaped), for
/// the encoders that make the same bytes without `JSONEncoder`'s code: ``CompactJSONEncoder`` and
/// the monitor's session record.
package enum JSONScalarText {
    /// `text` as a JSON string: quotes, backslashes and control characters escaped as
    /// `JSONEncoder` escapes them; everything else, `/` and non-ASCII included, as is.
    package static func appendString(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                bytes.append(hexDigit(byte >> 4))
                bytes.append(hexDigit(byte & 0xF))
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// A finite number as `JSONEncoder` writes it: Swift's shortest form, without a trailing `.0`.
    /// A number of at most six decimals from 0.001 up to 10⁹ (every value the monitor writes:
    /// milliseconds from nanoseconds or microseconds) is written from its integer millionths,
    /// which gives the same digits: such a decimal has at most 15 significant digits, so it is
    /// the one shortest decimal that reads back as the same `Double`. Anything else goes through
    /// `description`, whose code (a 64 KiB block of libswiftCore) a host that never prints a
    /// `Double` would otherwise map in when the monitor starts.
    package static func double(_ value: Double) -> String {
        if value == 0 { return value.sign == .minus ? "-0" : "0" }
        let millionths = (value * 1_000_000).rounded()
        if value >= 0.001 && millionths < 1e15 && millionths / 1_000_000 == value {
            let whole = UInt64(millionths)
            var text = String(whole / 1_000_000)
            let fraction = whole % 1_000_000
            guard fraction != 0 else { return text }
            // Six digits with their leading zeros (1_000_000 + fraction, less its "1"), less trailing zeros.
            var digits = Array(String(1_000_000 + fraction).utf8.dropFirst())
            while digits.last == UInt8(ascii: "0") { digits.removeLast() }
            text += "."
            text += String(decoding: digits, as: UTF8.self)
            return text
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }
}
