/// The `Encoder` of one value for ``CompactJSONEncoder``: what the value encodes becomes `node`.
final class CompactJSONValueEncoder: Encoder {
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var node: CompactJSONNode?

    init(codingPath: [any CodingKey]) {
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let object: CompactJSONObject
        if case .object(let existing) = node {
            object = existing
        } else {
            object = CompactJSONObject()
            node = .object(object)
        }
        return KeyedEncodingContainer(CompactJSONKeyedContainer<Key>(object: object, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let array: CompactJSONArray
        if case .array(let existing) = node {
            array = existing
        } else {
            array = CompactJSONArray()
            node = .array(array)
        }
        return CompactJSONUnkeyedContainer(array: array, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        CompactJSONSingleValueContainer(encoder: self)
    }
}

/// An array element's key in coding paths.
private struct CompactJSONIndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }
    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}

/// The key `superEncoder()` encodes under, as in `JSONEncoder`.
private struct CompactJSONSuperKey: CodingKey {
    var stringValue: String { "super" }
    var intValue: Int? { nil }
    init() {}
    init?(stringValue: String) { nil }
    init?(intValue: Int) { nil }
}

struct CompactJSONKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let object: CompactJSONObject
    let codingPath: [any CodingKey]

    private func set<T: Encodable>(_ value: T, _ key: any CodingKey) throws {
        object.set(try CompactJSONNode.make(value, codingPath: codingPath + [key]), for: key.stringValue)
    }

    mutating func encodeNil(forKey key: Key) throws { object.set(.scalar("null"), for: key.stringValue) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try set(value, key) }
    mutating func encode(_ value: String, forKey key: Key) throws { try set(value, key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try set(value, key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try set(value, key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try set(value, key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try set(value, key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try set(value, key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try set(value, key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try set(value, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try set(value, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try set(value, key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try set(value, key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try set(value, key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try set(value, key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try set(value, key) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(
            CompactJSONKeyedContainer<NestedKey>(
                object: object.nestedObject(for: key.stringValue), codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        CompactJSONUnkeyedContainer(array: object.nestedArray(for: key.stringValue), codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder { superEncoder(CompactJSONSuperKey()) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(key) }

    private func superEncoder(_ key: any CodingKey) -> any Encoder {
        let encoder = CompactJSONValueEncoder(codingPath: codingPath + [key])
        object.set(.encoder(encoder), for: key.stringValue)
        return encoder
    }
}

struct CompactJSONUnkeyedContainer: UnkeyedEncodingContainer {
    let array: CompactJSONArray
    let codingPath: [any CodingKey]
    var count: Int { array.elements.count }

    private var nextKey: any CodingKey { CompactJSONIndexKey(intValue: array.elements.count) }

    mutating func encodeNil() throws { array.elements.append(.scalar("null")) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        array.elements.append(try CompactJSONNode.make(value, codingPath: codingPath + [nextKey]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<
        NestedKey
    > {
        let object = CompactJSONObject()
        let path = codingPath + [nextKey]
        array.elements.append(.object(object))
        return KeyedEncodingContainer(CompactJSONKeyedContainer<NestedKey>(object: object, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = CompactJSONArray()
        let path = codingPath + [nextKey]
        array.elements.append(.array(nested))
        return CompactJSONUnkeyedContainer(array: nested, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let encoder = CompactJSONValueEncoder(codingPath: codingPath + [nextKey])
        array.elements.append(.encoder(encoder))
        return encoder
    }
}

struct CompactJSONSingleValueContainer: SingleValueEncodingContainer {
    let encoder: CompactJSONValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    private func set<T: Encodable>(_ value: T) throws {
        encoder.node = try CompactJSONNode.make(value, codingPath: encoder.codingPath)
    }

    mutating func encodeNil() throws { encoder.node = .scalar("null") }
    mutating func encode(_ value: Bool) throws { try set(value) }
    mutating func encode(_ value: String) throws { try set(value) }
    mutating func encode(_ value: Double) throws { try set(value) }
    mutating func encode(_ value: Float) throws { try set(value) }
    mutating func encode(_ value: Int) throws { try set(value) }
    mutating func encode(_ value: Int8) throws { try set(value) }
    mutating func encode(_ value: Int16) throws { try set(value) }
    mutating func encode(_ value: Int32) throws { try set(value) }
    mutating func encode(_ value: Int64) throws { try set(value) }
    mutating func encode(_ value: UInt) throws { try set(value) }
    mutating func encode(_ value: UInt8) throws { try set(value) }
    mutating func encode(_ value: UInt16) throws { try set(value) }
    mutating func encode(_ value: UInt32) throws { try set(value) }
    mutating func encode(_ value: UInt64) throws { try set(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try set(value) }
}
