import Foundation

/// Encodes values as compact JSON with the same bytes as `ReportCoding.makeEncoder(pretty: false)`
/// (sorted keys, slashes unescaped, dates as ``ReportCoding/formatDate(_:)``; `URL`, `Data` and
/// `Decimal` as `JSONEncoder` writes them), without `JSONEncoder`'s code.
///
/// The monitor encodes every report it writes. `JSONEncoder` was the largest part of the library
/// code a host that does not encode JSON itself mapped in for its first report (about 0.4 MiB of
/// Foundation's code pages), and it builds a tree of boxed values of the whole report on the
/// writer's heap. This encoder writes each value's JSON as soon as the value is encoded (see
/// ``CompactJSONNode``). A test checks its bytes against `JSONEncoder` for whole reports and for
/// every kind of value.
package struct CompactJSONEncoder: Sendable {
    package init() {}

    /// `value` as compact JSON; throws `EncodingError.invalidValue` for a number JSON cannot
    /// hold (NaN, infinity), as `JSONEncoder` does.
    package func encode<T: Encodable>(_ value: T) throws -> Data {
        let node = try CompactJSONNode.make(value, codingPath: [])
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4096)
        node.write(to: &bytes)
        return Data(bytes)
    }
}

/// One value of the tree: a scalar already in its JSON form, a string still to be escaped, a
/// value already written, or a container filled by the `Encoder` that made it.
///
/// A value's containers are written out as soon as its `encode(to:)` returns (no one may use
/// them after that), so the tree never holds more than the containers of the values being
/// encoded right now: a report's samples become bytes one by one, not a tree of every number.
enum CompactJSONNode {
    /// A number, `true`, `false` or `null`, written as is.
    case scalar(String)
    case string(String)
    /// A whole value's JSON.
    case raw([UInt8])
    case array(CompactJSONArray)
    case object(CompactJSONObject)
    /// A `superEncoder()`: whatever was encoded into it by the time the tree is written.
    case encoder(CompactJSONValueEncoder)

    /// The node for `value`: the types `JSONEncoder` writes specially directly, anything else
    /// through its `encode(to:)`.
    static func make<T: Encodable>(_ value: T, codingPath: @autoclosure () -> [any CodingKey]) throws -> Self {
        if let node = try scalar(value, codingPath: codingPath) { return node }
        let encoder = CompactJSONValueEncoder(codingPath: codingPath())
        try value.encode(to: encoder)
        switch encoder.node {
        case .none: return .raw(emptyObject)
        case .array, .object, .encoder:
            var bytes: [UInt8] = []
            encoder.node?.write(to: &bytes)
            return .raw(bytes)
        case .some(let node): return node
        }
    }

    /// What `JSONEncoder` writes for a value that encoded nothing.
    private static let emptyObject: [UInt8] = [UInt8(ascii: "{"), UInt8(ascii: "}")]

    /// `value` itself when `T` is exactly `U` (a metadata comparison first: the cast runs only for
    /// the one type that matches, and cannot fail).
    @inline(__always)
    private static func exactly<T, U>(_ value: T, _ type: U.Type) -> U? {
        T.self == U.self ? value as? U : nil
    }

    private static func scalar<T>(_ value: T, codingPath: () -> [any CodingKey]) throws -> Self? {
        if let int = exactly(value, Int.self) { return .scalar(String(int)) }
        if let double = exactly(value, Double.self) { return try number(double, codingPath: codingPath) }
        if let string = exactly(value, String.self) { return .string(string) }
        if let bool = exactly(value, Bool.self) { return .scalar(bool ? "true" : "false") }
        if let int = exactly(value, UInt64.self) { return .scalar(String(int)) }
        if let int = exactly(value, Int64.self) { return .scalar(String(int)) }
        if let int = exactly(value, UInt.self) { return .scalar(String(int)) }
        if let int = exactly(value, Int32.self) { return .scalar(String(int)) }
        if let int = exactly(value, UInt32.self) { return .scalar(String(int)) }
        if let int = exactly(value, Int16.self) { return .scalar(String(int)) }
        if let int = exactly(value, UInt16.self) { return .scalar(String(int)) }
        if let int = exactly(value, Int8.self) { return .scalar(String(int)) }
        if let int = exactly(value, UInt8.self) { return .scalar(String(int)) }
        if let float = exactly(value, Float.self) { return try number(float, codingPath: codingPath) }
        if let date = exactly(value, Date.self) { return .string(ReportCoding.formatDate(date)) }
        if let url = exactly(value, URL.self) { return .string(url.absoluteString) }
        if let data = exactly(value, Data.self) { return .string(data.base64EncodedString()) }
        if let decimal = exactly(value, Decimal.self) { return .scalar(decimal.description) }
        return nil
    }

    static func number(_ value: Double, codingPath: () -> [any CodingKey]) throws -> Self {
        guard value.isFinite else { throw nonFinite(value, codingPath()) }
        return .scalar(JSONScalarText.double(value))
    }

    static func number(_ value: Float, codingPath: () -> [any CodingKey]) throws -> Self {
        guard value.isFinite else { throw nonFinite(value, codingPath()) }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return .scalar(text)
    }

    private static func nonFinite(_ value: Any, _ codingPath: [any CodingKey]) -> EncodingError {
        .invalidValue(
            value, .init(codingPath: codingPath, debugDescription: "Unable to encode \(value) directly in JSON."))
    }

    /// Appends the node's JSON; object members in the byte order of their keys' UTF-8, as
    /// `JSONEncoder`'s `sortedKeys` orders them.
    func write(to bytes: inout [UInt8]) {
        switch self {
        case .scalar(let text):
            bytes.append(contentsOf: text.utf8)
        case .string(let text):
            JSONScalarText.appendString(text, to: &bytes)
        case .raw(let json):
            bytes.append(contentsOf: json)
        case .array(let array):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in array.elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                element.write(to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            bytes.append(UInt8(ascii: "{"))
            let order = object.keys.indices.sorted {
                object.keys[$0].utf8.lexicographicallyPrecedes(object.keys[$1].utf8)
            }
            for (position, index) in order.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                JSONScalarText.appendString(object.keys[index], to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                object.values[index].write(to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        case .encoder(let encoder):
            if let node = encoder.node {
                node.write(to: &bytes)
            } else {
                bytes.append(contentsOf: Self.emptyObject)
            }
        }
    }
}

/// An array's elements, appended by its unkeyed containers.
final class CompactJSONArray {
    var elements: [CompactJSONNode] = []
}

/// An object's members in the order they were first set; a key set again keeps its last value,
/// as in `JSONEncoder`.
final class CompactJSONObject {
    var keys: [String] = []
    var values: [CompactJSONNode] = []

    func set(_ node: CompactJSONNode, for key: String) {
        if let index = keys.firstIndex(of: key) {
            values[index] = node
        } else {
            keys.append(key)
            values.append(node)
        }
    }

    /// The object already set for `key` (`JSONEncoder` hands the same one out again), or a new one.
    func nestedObject(for key: String) -> CompactJSONObject {
        if let index = keys.firstIndex(of: key), case .object(let object) = values[index] { return object }
        let object = CompactJSONObject()
        set(.object(object), for: key)
        return object
    }

    /// The array already set for `key`, or a new one.
    func nestedArray(for key: String) -> CompactJSONArray {
        if let index = keys.firstIndex(of: key), case .array(let array) = values[index] { return array }
        let array = CompactJSONArray()
        set(.array(array), for: key)
        return array
    }
}
