/// A minimal protocol buffers wire-format encoder: just what the pprof export needs.
///
/// Fields are written in the order they are appended. Scalars use the varint wire type (0), int64
/// values as their two's-complement 64-bit pattern, as protobuf specifies; strings, bytes, nested
/// messages and packed repeated varints use the length-delimited wire type (2). Fields with the
/// default value (0, false, empty) can be left out by the caller, as proto3 does.
struct ProtobufWriter {
    /// The encoded bytes so far.
    private(set) var bytes: [UInt8] = []

    /// Wire types used here.
    enum WireType: UInt64 {
        case varint = 0
        case lengthDelimited = 2
    }

    /// Appends `value` as a base-128 varint (7 bits per byte, low bits first).
    mutating func appendVarint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// Appends a field key: field number and wire type.
    mutating func appendKey(_ field: Int, _ type: WireType) {
        appendVarint(UInt64(field) << 3 | type.rawValue)
    }

    /// A `uint64` field; nothing when `value` is 0 (proto3 default).
    mutating func uint64(_ field: Int, _ value: UInt64) {
        guard value != 0 else { return }
        appendKey(field, .varint)
        appendVarint(value)
    }

    /// An `int64` field (negative values take 10 bytes); nothing when `value` is 0.
    mutating func int64(_ field: Int, _ value: Int64) {
        uint64(field, UInt64(bitPattern: value))
    }

    /// A `bool` field; nothing when false.
    mutating func bool(_ field: Int, _ value: Bool) {
        uint64(field, value ? 1 : 0)
    }

    /// A `string` field, always written (repeated string entries must keep their position, even
    /// an empty one).
    mutating func string(_ field: Int, _ value: String) {
        appendKey(field, .lengthDelimited)
        let utf8 = Array(value.utf8)
        appendVarint(UInt64(utf8.count))
        bytes += utf8
    }

    /// A nested message field, encoded by `body`.
    mutating func message(_ field: Int, _ body: (inout ProtobufWriter) -> Void) {
        var nested = ProtobufWriter()
        body(&nested)
        appendKey(field, .lengthDelimited)
        appendVarint(UInt64(nested.bytes.count))
        bytes += nested.bytes
    }

    /// A repeated message field: one nested message per element, in order; nothing when empty.
    mutating func messages(_ field: Int, _ items: [any ProtobufMessage]) {
        for item in items { message(field) { $0.append(item.fields) } }
    }

    /// A packed repeated `uint64` field; nothing when empty.
    mutating func packedUInt64(_ field: Int, _ values: [UInt64]) {
        guard !values.isEmpty else { return }
        var packed = ProtobufWriter()
        for value in values { packed.appendVarint(value) }
        appendKey(field, .lengthDelimited)
        appendVarint(UInt64(packed.bytes.count))
        bytes += packed.bytes
    }

    /// A packed repeated `int64` field; nothing when empty.
    mutating func packedInt64(_ field: Int, _ values: [Int64]) {
        packedUInt64(field, values.map { UInt64(bitPattern: $0) })
    }
}

/// A protocol buffers message described by its fields (see ``ProtobufWriter/messages(_:_:)``).
protocol ProtobufMessage {
    /// The message's fields in the order they are written.
    var fields: [ProtobufField] { get }
}

/// One field of a ``ProtobufMessage``: its number and value, written as the matching
/// ``ProtobufWriter`` method writes it.
enum ProtobufField {
    case uint64(Int, UInt64)
    case int64(Int, Int64)
    case bool(Int, Bool)
    case packedUInt64(Int, [UInt64])
    case packedInt64(Int, [Int64])
    case messages(Int, [any ProtobufMessage])
}

extension ProtobufWriter {
    /// Appends the fields of one message.
    mutating func append(_ fields: [ProtobufField]) {
        for field in fields {
            switch field {
            case .uint64(let number, let value): uint64(number, value)
            case .int64(let number, let value): int64(number, value)
            case .bool(let number, let value): bool(number, value)
            case .packedUInt64(let number, let values): packedUInt64(number, values)
            case .packedInt64(let number, let values): packedInt64(number, values)
            case .messages(let number, let items): messages(number, items)
            }
        }
    }
}
