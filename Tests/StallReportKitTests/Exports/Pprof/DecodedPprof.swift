import Foundation

/// A pprof `Profile` decoded with ``ProtobufTestReader`` by the field numbers of google/pprof's
/// `proto/profile.proto`, strings resolved through the string table.
struct DecodedPprof {
    struct Label: Equatable {
        var key: String
        var str: String
        var num: Int64
    }

    struct Sample {
        var locationIDs: [UInt64]
        var values: [Int64]
        var labels: [Label]

        func string(_ key: String) -> String? { labels.first { $0.key == key }?.str }
        func number(_ key: String) -> Int64? { labels.first { $0.key == key }?.num }
    }

    struct Mapping {
        var id: UInt64 = 0, start: UInt64 = 0, limit: UInt64 = 0, offset: UInt64 = 0
        var filename = "", buildID = ""
        var hasFunctions = false, hasFilenames = false, hasLineNumbers = false, hasInlineFrames = false
    }

    struct Line {
        var functionID: UInt64
        var line: Int64
    }

    struct Location {
        var id: UInt64 = 0, mappingID: UInt64 = 0, address: UInt64 = 0
        var lines: [Line] = []
    }

    struct Function {
        var id: UInt64 = 0
        var name = "", systemName = "", filename = ""
        var startLine: Int64 = 0
    }

    var sampleTypes: [(type: String, unit: String)] = []
    var samples: [Sample] = []
    var mappings: [Mapping] = []
    var locations: [Location] = []
    var functions: [Function] = []
    var strings: [String] = []
    var timeNanos: Int64 = 0
    var durationNanos: Int64 = 0
    var periodType: (type: String, unit: String)?
    var period: Int64 = 0
    var comments: [String] = []
    var defaultSampleType = ""

    /// The function named by the first line of location `id`, if any.
    func functionName(ofLocation id: UInt64) -> String? {
        guard let location = locations.first(where: { $0.id == id }), let line = location.lines.first else {
            return nil
        }
        return functions.first { $0.id == line.functionID }?.name
    }

    init(_ bytes: [UInt8]) throws {
        typealias R = ProtobufTestReader
        let fields = try R.fields(bytes)
        // Strings first: every other field refers to them.
        for (field, value) in fields where field == 6 {
            guard case .bytes(let utf8) = value, let string = String(bytes: utf8, encoding: .utf8) else {
                throw R.Malformed(description: "string")
            }
            strings.append(string)
        }
        func string(_ index: UInt64) throws -> String {
            guard Int(index) < strings.count else {
                throw R.Malformed(description: "string index \(index) of \(strings.count)")
            }
            return strings[Int(index)]
        }
        func message(_ value: R.Value) throws -> [(field: Int, value: R.Value)] {
            guard case .bytes(let bytes) = value else { throw R.Malformed(description: "not a message") }
            return try R.fields(bytes)
        }
        func varint(_ value: R.Value) throws -> UInt64 {
            guard case .varint(let v) = value else { throw R.Malformed(description: "not a varint") }
            return v
        }
        func valueType(_ value: R.Value) throws -> (String, String) {
            var type: UInt64 = 0
            var unit: UInt64 = 0
            for (f, v) in try message(value) {
                if f == 1 { type = try varint(v) } else if f == 2 { unit = try varint(v) }
            }
            return (try string(type), try string(unit))
        }
        for (field, value) in fields {
            switch field {
            case 1: sampleTypes.append(try valueType(value))
            case 2:
                let parts = try message(value)
                var labels: [Label] = []
                for (f, v) in parts where f == 3 {
                    var key: UInt64 = 0
                    var str: UInt64 = 0
                    var num: UInt64 = 0
                    for (lf, lv) in try message(v) {
                        switch lf {
                        case 1: key = try varint(lv)
                        case 2: str = try varint(lv)
                        case 3: num = try varint(lv)
                        default: break
                        }
                    }
                    labels.append(Label(key: try string(key), str: try string(str), num: Int64(bitPattern: num)))
                }
                samples.append(
                    Sample(
                        locationIDs: try R.repeatedVarints(parts.filter { $0.field == 1 }.map(\.value)),
                        values: try R.repeatedVarints(parts.filter { $0.field == 2 }.map(\.value)).map {
                            Int64(bitPattern: $0)
                        },
                        labels: labels))
            case 3:
                var mapping = Mapping()
                for (f, v) in try message(value) {
                    let n = try varint(v)
                    switch f {
                    case 1: mapping.id = n
                    case 2: mapping.start = n
                    case 3: mapping.limit = n
                    case 4: mapping.offset = n
                    case 5: mapping.filename = try string(n)
                    case 6: mapping.buildID = try string(n)
                    case 7: mapping.hasFunctions = n != 0
                    case 8: mapping.hasFilenames = n != 0
                    case 9: mapping.hasLineNumbers = n != 0
                    case 10: mapping.hasInlineFrames = n != 0
                    default: break
                    }
                }
                mappings.append(mapping)
            case 4:
                var location = Location()
                for (f, v) in try message(value) {
                    switch f {
                    case 1: location.id = try varint(v)
                    case 2: location.mappingID = try varint(v)
                    case 3: location.address = try varint(v)
                    case 4:
                        var line = Line(functionID: 0, line: 0)
                        for (lf, lv) in try message(v) {
                            if lf == 1 {
                                line.functionID = try varint(lv)
                            } else if lf == 2 {
                                line.line = Int64(bitPattern: try varint(lv))
                            }
                        }
                        location.lines.append(line)
                    default: break
                    }
                }
                locations.append(location)
            case 5:
                var function = Function()
                for (f, v) in try message(value) {
                    let n = try varint(v)
                    switch f {
                    case 1: function.id = n
                    case 2: function.name = try string(n)
                    case 3: function.systemName = try string(n)
                    case 4: function.filename = try string(n)
                    case 5: function.startLine = Int64(bitPattern: n)
                    default: break
                    }
                }
                functions.append(function)
            case 9: timeNanos = Int64(bitPattern: try varint(value))
            case 10: durationNanos = Int64(bitPattern: try varint(value))
            case 11: periodType = try valueType(value)
            case 12: period = Int64(bitPattern: try varint(value))
            case 13: comments += try R.repeatedVarints([value]).map { try string($0) }
            case 14: defaultSampleType = try string(try varint(value))
            default: break
            }
        }
    }
}
