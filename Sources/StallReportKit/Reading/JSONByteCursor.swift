import Foundation

/// Raised by ``JSONByteCursor`` and ``FastRecordExtractor`` whenever the bytes are anything but a
/// plain, valid report: the caller then decodes the file with the full decoder, which gives the
/// result (or the precise error) that counts.
struct FastPathMiss: Error {}

/// A string inside the JSON bytes: the bytes between the quotes, and whether they hold escapes.
struct JSONStringSpan {
    var start: Int
    var end: Int
    var hasEscapes: Bool
}

/// A forward-only reader over JSON bytes that validates what it passes (RFC 8259 grammar, UTF-8,
/// escapes) without building values, except for the few it is asked for. Anything it does not
/// accept with certainty throws ``FastPathMiss``.
struct JSONByteCursor {
    let base: UnsafePointer<UInt8>
    let count: Int
    var position: Int
    /// Deepest nesting skipped values may reach.
    let depthLimit: Int

    init(_ bytes: UnsafeRawBufferPointer, depthLimit: Int) throws(FastPathMiss) {
        guard let start = bytes.baseAddress, bytes.count > 0 else { throw FastPathMiss() }
        base = start.assumingMemoryBound(to: UInt8.self)
        count = bytes.count
        position = 0
        self.depthLimit = depthLimit
    }

    @inline(__always) func byte(at index: Int) -> UInt8 { base[index] }

    @inline(__always) private func word(at index: Int) -> UInt64 {
        UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// High bit set at the word's zero bytes (exact up to the first one; borrows may mark bytes after it).
    @inline(__always) private static func zeroBytes(_ word: UInt64) -> UInt64 {
        (word &- ones) & ~word & highBits
    }

    /// Marks, in the 8 bytes at `index`, those that end or escape a string or need checks (below
    /// 0x20, at or above 0x80); the lowest mark is exactly the first such byte.
    @inline(__always) private func specialBytes(at index: Int) -> UInt64 {
        let bytes = word(at: index)
        let quotes = Self.zeroBytes(bytes ^ (Self.ones &* 0x22))
        let backslashes = Self.zeroBytes(bytes ^ (Self.ones &* 0x5C))
        let unusual = ((bytes &- Self.ones &* 0x20) | bytes) & Self.highBits
        return quotes | backslashes | unusual
    }

    /// Skips JSON whitespace; returns the next byte (0 at the end).
    @inline(__always) mutating func peek() -> UInt8 {
        while position < count {
            let byte = base[position]
            if byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
                position += 1
                // Indentation: the run of spaces, eight bytes at a time.
                while position + 8 <= count {
                    let others = word(at: position) ^ 0x2020_2020_2020_2020
                    if others == 0 {
                        position += 8
                    } else {
                        position += others.trailingZeroBitCount >> 3
                        break
                    }
                }
            } else {
                return byte
            }
        }
        return 0
    }

    /// Consumes `expected` (after whitespace).
    @inline(__always) mutating func expect(_ expected: UInt8) throws(FastPathMiss) {
        guard peek() == expected else { throw FastPathMiss() }
        position += 1
    }

    /// After a member or element: true when another follows (`,` consumed), false at `close` (consumed).
    @inline(__always) mutating func next(close: UInt8) throws(FastPathMiss) -> Bool {
        let byte = peek()
        position += 1
        if byte == UInt8(ascii: ",") { return true }
        if byte == close { return false }
        throw FastPathMiss()
    }

    /// Consumes `{` or `[`; true when the container is empty (its closing byte consumed too).
    mutating func open(_ opening: UInt8, close: UInt8) throws(FastPathMiss) -> Bool {
        try expect(opening)
        if peek() == close {
            position += 1
            return true
        }
        return false
    }

    /// True (and consumed) when the next value is `null`.
    mutating func takeNull() throws(FastPathMiss) -> Bool {
        guard peek() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    mutating func literal(_ word: StaticString) throws(FastPathMiss) {
        let length = word.utf8CodeUnitCount
        guard position + length <= count else { throw FastPathMiss() }
        let text = word.utf8Start
        for offset in 0..<length where base[position + offset] != text[offset] { throw FastPathMiss() }
        position += length
    }

    /// A `true` or `false`.
    mutating func bool() throws(FastPathMiss) -> Bool {
        switch peek() {
        case UInt8(ascii: "t"):
            try literal("true")
            return true
        case UInt8(ascii: "f"):
            try literal("false")
            return false
        default: throw FastPathMiss()
        }
    }

    /// A string, validated (control characters, escapes, UTF-8); its span.
    mutating func stringSpan() throws(FastPathMiss) -> JSONStringSpan {
        try expect(UInt8(ascii: "\""))
        let start = position
        var escapes = false
        while true {
            // Eight plain bytes at a time, up to the first byte that needs a look.
            while position + 8 <= count {
                let special = specialBytes(at: position)
                if special == 0 {
                    position += 8
                } else {
                    position += special.trailingZeroBitCount >> 3
                    break
                }
            }
            guard position < count else { throw FastPathMiss() }
            let byte = base[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return JSONStringSpan(start: start, end: position - 1, hasEscapes: escapes)
            }
            if byte == UInt8(ascii: "\\") {
                escapes = true
                try skipEscape()
            } else if byte < 0x20 {
                throw FastPathMiss()
            } else if byte < 0x80 {
                position += 1
            } else {
                try skipUTF8Sequence()
            }
        }
    }

    /// A string's value.
    mutating func string() throws(FastPathMiss) -> String {
        try value(of: stringSpan())
    }

    /// The value of a string already passed.
    func value(of span: JSONStringSpan) throws(FastPathMiss) -> String {
        let bytes = UnsafeBufferPointer(start: base + span.start, count: span.end - span.start)
        guard span.hasEscapes else { return String(decoding: bytes, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                index += 1
                continue
            }
            let kind = bytes[index + 1]
            index += 2
            switch kind {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(kind)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            default:
                var scalar = Self.hex4(bytes, index)
                index += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    // skipEscape checked that a low surrogate follows.
                    let low = Self.hex4(bytes, index + 2)
                    index += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let unicode = Unicode.Scalar(scalar) else { throw FastPathMiss() }
                out.append(contentsOf: Array(String(Character(unicode)).utf8))
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hex4(_ bytes: UnsafeBufferPointer<UInt8>, _ index: Int) -> UInt32 {
        var value: UInt32 = 0
        for offset in 0..<4 { value = value << 4 | UInt32(hexDigit(bytes[index + offset]) ?? 0) }
        return value
    }

    @inline(__always) private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// Passes one escape (at the backslash); lone or reversed surrogates are a miss.
    private mutating func skipEscape() throws(FastPathMiss) {
        guard position + 1 < count else { throw FastPathMiss() }
        switch base[position + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            position += 2
        case UInt8(ascii: "u"):
            let scalar = try unicodeEscape(at: position)
            position += 6
            if (0xDC00...0xDFFF).contains(scalar) { throw FastPathMiss() }
            if (0xD800...0xDBFF).contains(scalar) {
                guard position + 1 < count, base[position] == UInt8(ascii: "\\"),
                    base[position + 1] == UInt8(ascii: "u"),
                    (0xDC00...0xDFFF).contains(try unicodeEscape(at: position))
                else { throw FastPathMiss() }
                position += 6
            }
            // NUL in a string is valid JSON but unusual: leave it to the full decoder.
            if scalar == 0 { throw FastPathMiss() }
        default:
            throw FastPathMiss()
        }
    }

    private func unicodeEscape(at index: Int) throws(FastPathMiss) -> UInt32 {
        guard index + 6 <= count else { throw FastPathMiss() }
        var value: UInt32 = 0
        for offset in 2..<6 {
            guard let digit = Self.hexDigit(base[index + offset]) else { throw FastPathMiss() }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// Passes one well-formed UTF-8 sequence of two to four bytes (no overlongs, no surrogates).
    private mutating func skipUTF8Sequence() throws(FastPathMiss) {
        let lead = base[position]
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            high = 0x9F
        case 0xF0:
            length = 4
            low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            high = 0x8F
        default: throw FastPathMiss()
        }
        guard position + length <= count else { throw FastPathMiss() }
        let second = base[position + 1]
        guard second >= low, second <= high else { throw FastPathMiss() }
        for offset in 2..<max(2, length) where base[position + offset] & 0xC0 != 0x80 { throw FastPathMiss() }
        position += length
    }

    /// Passes a number (RFC 8259 grammar); returns its span and whether it is a plain integer.
    mutating func numberSpan() throws(FastPathMiss) -> (start: Int, end: Int, integer: Bool) {
        _ = peek()
        let start = position
        var integer = true
        if position < count, base[position] == UInt8(ascii: "-") { position += 1 }
        guard position < count else { throw FastPathMiss() }
        if base[position] == UInt8(ascii: "0") {
            position += 1
        } else if (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(base[position]) {
            while position < count, isDigit(base[position]) { position += 1 }
        } else {
            throw FastPathMiss()
        }
        if position < count, base[position] == UInt8(ascii: ".") {
            integer = false
            position += 1
            guard position < count, isDigit(base[position]) else { throw FastPathMiss() }
            while position < count, isDigit(base[position]) { position += 1 }
        }
        if position < count, base[position] | 0x20 == UInt8(ascii: "e") {
            integer = false
            position += 1
            if position < count, base[position] == UInt8(ascii: "+") || base[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard position < count, isDigit(base[position]) else { throw FastPathMiss() }
            while position < count, isDigit(base[position]) { position += 1 }
        }
        return (start, position, integer)
    }

    @inline(__always) private func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    /// A non-negative integer of at most 18 digits, at least `minimum`; anything else is a miss.
    mutating func int(minimum: Int = 0) throws(FastPathMiss) -> Int {
        _ = peek()
        let start = position
        var value = 0
        while position < count {
            let digit = base[position] &- UInt8(ascii: "0")
            guard digit < 10 else { break }
            value = value &* 10 &+ Int(digit)
            position += 1
        }
        let length = position - start
        // No digits (a sign, another value), a leading zero, too long, or a fraction or exponent next.
        guard length > 0, length <= 18, length == 1 || base[start] != UInt8(ascii: "0"), value >= minimum else {
            throw FastPathMiss()
        }
        if position < count {
            let next = base[position]
            guard next != UInt8(ascii: "."), next | 0x20 != UInt8(ascii: "e") else { throw FastPathMiss() }
        }
        return value
    }

    /// A non-negative integer that fits `UInt64` (at most 19 digits).
    mutating func uint64() throws(FastPathMiss) -> UInt64 {
        let span = try numberSpan()
        guard span.integer, base[span.start] != UInt8(ascii: "-"), span.end - span.start <= 19 else {
            throw FastPathMiss()
        }
        var value: UInt64 = 0
        for index in span.start..<span.end { value = value * 10 + UInt64(base[index] - UInt8(ascii: "0")) }
        return value
    }

    /// A time in milliseconds a report may hold (0, or from 1 ns to 1e10 ms: above 0 when
    /// `positive`); anything else is a miss (the full decoder names what is wrong).
    mutating func double(positive: Bool = false) throws(FastPathMiss) -> Double {
        let span = try numberSpan()
        guard base[span.start] != UInt8(ascii: "-") else { throw FastPathMiss() }
        let value = try Self.parseDouble(base + span.start, count: span.end - span.start)
        guard StallReport.isPhysicalMilliseconds(value), !positive || value > 0 else { throw FastPathMiss() }
        return value
    }

    private static let powersOfTen: [Double] = (0...22).map { pow(10, Double($0)) }

    /// Correctly rounded: exact for up to 15 significant digits without exponent, else `strtod`.
    static func parseDouble(_ start: UnsafePointer<UInt8>, count: Int) throws(FastPathMiss) -> Double {
        var mantissa: UInt64 = 0
        var digits = 0
        var fraction = 0
        var seenPoint = false
        var simple = true
        for index in 0..<count {
            let byte = start[index]
            if byte == UInt8(ascii: ".") {
                seenPoint = true
                continue
            }
            guard byte &- UInt8(ascii: "0") < 10 else {
                simple = false
                break
            }
            if mantissa != 0 || byte != UInt8(ascii: "0") { digits += 1 }
            mantissa = mantissa &* 10 &+ UInt64(byte - UInt8(ascii: "0"))
            if seenPoint { fraction += 1 }
            if digits > 15 || fraction > 22 {
                simple = false
                break
            }
        }
        if simple { return Double(mantissa) / powersOfTen[fraction] }
        guard count < 64 else { throw FastPathMiss() }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: count + 1) { buffer in
            for index in 0..<count { buffer[index] = CChar(bitPattern: start[index]) }
            buffer[count] = 0
            return strtod(buffer.baseAddress!, nil)
        }
    }

    /// Passes any value, validating it; containers may nest up to ``depthLimit`` (counted as if
    /// the value were at the deepest level a report's known keys reach, so never too late).
    mutating func skipValue(depth: Int = 4) throws(FastPathMiss) {
        switch peek() {
        case UInt8(ascii: "\""): _ = try stringSpan()
        case UInt8(ascii: "{"):
            guard depth < depthLimit - 1 else { throw FastPathMiss() }
            if try open(UInt8(ascii: "{"), close: UInt8(ascii: "}")) { return }
            repeat {
                _ = try stringSpan()
                try expect(UInt8(ascii: ":"))
                try skipValue(depth: depth + 1)
            } while try next(close: UInt8(ascii: "}"))
        case UInt8(ascii: "["):
            guard depth < depthLimit - 1 else { throw FastPathMiss() }
            if try open(UInt8(ascii: "["), close: UInt8(ascii: "]")) { return }
            repeat { try skipValue(depth: depth + 1) } while try next(close: UInt8(ascii: "]"))
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default: _ = try numberSpan()
        }
    }

    /// Runs `member` for each key of an object (the cursor then at the value, which `member` must pass).
    mutating func forEachMember(
        _ member: (inout JSONByteCursor, JSONStringSpan) throws(FastPathMiss) -> Void
    ) throws(FastPathMiss) {
        if try open(UInt8(ascii: "{"), close: UInt8(ascii: "}")) { return }
        repeat {
            let key = try stringSpan()
            try expect(UInt8(ascii: ":"))
            try member(&self, key)
        } while try next(close: UInt8(ascii: "}"))
    }

    /// Runs `element` for each element of an array (the cursor at the element, which `element` must pass).
    mutating func forEachElement(_ element: (inout JSONByteCursor) throws(FastPathMiss) -> Void) throws(FastPathMiss) {
        if try open(UInt8(ascii: "["), close: UInt8(ascii: "]")) { return }
        repeat { try element(&self) } while try next(close: UInt8(ascii: "]"))
    }

    /// True when two spans hold the same bytes.
    func sameBytes(_ a: JSONStringSpan, _ b: JSONStringSpan) -> Bool {
        a.end - a.start == b.end - b.start && memcmp(base + a.start, base + b.start, a.end - a.start) == 0
    }

    /// Which of the table's names the key is, or nil for an unknown key.
    func keyIndex(_ key: JSONStringSpan, in table: KeyTable) throws(FastPathMiss) -> Int? {
        if key.hasEscapes {
            let text = Array(try value(of: key).utf8)
            return table.names.firstIndex(of: text)
        }
        let length = key.end - key.start
        // The key's first (up to) eight bytes, as the table packs its names.
        var prefix: UInt64 = 0
        if key.start + 8 <= count {
            prefix = word(at: key.start)
            if length < 8 { prefix &= (1 << UInt64(length * 8)) &- 1 }
        } else {
            for offset in 0..<min(length, 8) { prefix |= UInt64(base[key.start + offset]) << UInt64(offset * 8) }
        }
        for index in 0..<table.prefixes.count where table.prefixes[index] == prefix && table.lengths[index] == length {
            if length <= 8 { return index }
            let same = table.names[index].withUnsafeBufferPointer {
                memcmp($0.baseAddress! + 8, base + key.start + 8, length - 8) == 0
            }
            if same { return index }
        }
        return nil
    }
}

/// Key names of one kind of object, packed for ``JSONByteCursor/keyIndex(_:in:)``: a key is
/// matched by its length and first eight bytes in one comparison.
struct KeyTable: Sendable {
    let names: [[UInt8]]
    let prefixes: [UInt64]
    let lengths: [Int]
    /// The bits (by index in ``names``) of the keys an object must have.
    let required: UInt64

    /// A table of the keys in `list`; a key written with a trailing `?` is optional (the `?` is
    /// not part of its name), every other one required.
    init(_ list: [String]) {
        precondition(list.count <= 64, "a key table holds up to 64 keys")
        required = list.enumerated().reduce(0) { mask, key in
            key.element.hasSuffix("?") ? mask : mask | 1 << UInt64(key.offset)
        }
        names = list.map { Array(($0.hasSuffix("?") ? String($0.dropLast()) : $0).utf8) }
        prefixes = names.map { name in
            var prefix: UInt64 = 0
            for (offset, byte) in name.prefix(8).enumerated() { prefix |= UInt64(byte) << UInt64(offset * 8) }
            return prefix
        }
        lengths = names.map(\.count)
    }
}
