import Foundation

/// A small protobuf wire-format reader for the tests: independent of the export's writer, it
/// splits a message into fields (varints, length-delimited bytes, fixed32/64) and fails on
/// anything malformed.
struct ProtobufTestReader {
    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    /// One field of a message.
    enum Value {
        case varint(UInt64)
        case bytes([UInt8])
        case fixed64(UInt64)
        case fixed32(UInt32)
    }

    /// The fields of `bytes`, in order.
    static func fields(_ bytes: [UInt8]) throws -> [(field: Int, value: Value)] {
        var position = 0
        var result: [(Int, Value)] = []
        func varint() throws -> UInt64 { try readVarint(bytes, at: &position) }
        while position < bytes.count {
            let key = try varint()
            let field = Int(key >> 3)
            guard field > 0 else { throw Malformed(description: "field number 0") }
            switch key & 7 {
            case 0: result.append((field, .varint(try varint())))
            case 1:
                guard position + 8 <= bytes.count else { throw Malformed(description: "truncated fixed64") }
                let value = bytes[position..<position + 8].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                position += 8
                result.append((field, .fixed64(value)))
            case 2:
                let length = Int(try varint())
                guard length >= 0, position + length <= bytes.count else {
                    throw Malformed(description: "length \(length) past the end")
                }
                result.append((field, .bytes(Array(bytes[position..<position + length]))))
                position += length
            case 5:
                guard position + 4 <= bytes.count else { throw Malformed(description: "truncated fixed32") }
                let value = bytes[position..<position + 4].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                position += 4
                result.append((field, .fixed32(value)))
            default: throw Malformed(description: "wire type \(key & 7)")
            }
        }
        return result
    }

    /// The varint that starts at `position` in `bytes`; moves `position` past it.
    private static func readVarint(_ bytes: [UInt8], at position: inout Int) throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard position < bytes.count, shift < 64 else {
                throw Malformed(description: "truncated varint at \(position)")
            }
            let byte = bytes[position]
            position += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }

    /// The varints of a repeated scalar field, packed or not.
    static func repeatedVarints(_ values: [Value]) throws -> [UInt64] {
        var result: [UInt64] = []
        for value in values {
            switch value {
            case .varint(let v): result.append(v)
            case .bytes(let packed):
                var position = 0
                while position < packed.count { result.append(try readVarint(packed, at: &position)) }
            default: throw Malformed(description: "not a varint field")
            }
        }
        return result
    }
}
