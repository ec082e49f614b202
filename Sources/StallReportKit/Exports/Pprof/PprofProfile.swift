/// The messages of google/pprof's `proto/profile.proto` (package `perftools.profiles`) that the
/// export writes, with their wire encoding. Field numbers are the proto's; string fields are
/// indices into ``stringTable``, whose entry 0 is "".
struct PprofProfile {
    /// `ValueType`: what one sample value means.
    struct ValueType {
        var type: Int64  // 1
        var unit: Int64  // 2
    }

    /// `Label`: a string (`str`) or numeric (`num`, `num_unit`) annotation of a sample.
    struct Label {
        var key: Int64  // 1
        var str: Int64 = 0  // 2
        var num: Int64 = 0  // 3
        var numUnit: Int64 = 0  // 4
    }

    /// `Sample`: a stack, leaf first, and its values.
    struct Sample {
        var locationIDs: [UInt64]  // 1, packed
        var values: [Int64]  // 2, packed
        var labels: [Label]  // 3
    }

    /// `Mapping`: an address range of one loaded file.
    struct Mapping {
        var id: UInt64  // 1
        var memoryStart: UInt64  // 2
        var memoryLimit: UInt64  // 3
        var fileOffset: UInt64  // 4
        var filename: Int64  // 5
        var buildID: Int64  // 6
        var hasFunctions: Bool  // 7
        var hasFilenames: Bool  // 8
        var hasLineNumbers: Bool  // 9
        var hasInlineFrames: Bool  // 10
    }

    /// `Line`: a function and a line in it.
    struct Line {
        var functionID: UInt64  // 1
        var line: Int64  // 2
    }

    /// `Location`: one address in one mapping.
    struct Location {
        var id: UInt64  // 1
        var mappingID: UInt64  // 2
        var address: UInt64  // 3
        var lines: [Line]  // 4
    }

    /// `Function`: a named function in a source file.
    struct Function {
        var id: UInt64  // 1
        var name: Int64  // 2
        var systemName: Int64  // 3
        var filename: Int64  // 4
        var startLine: Int64  // 5
    }

    var sampleTypes: [ValueType] = []  // 1
    var samples: [Sample] = []  // 2
    var mappings: [Mapping] = []  // 3
    var locations: [Location] = []  // 4
    var functions: [Function] = []  // 5
    var stringTable: [String] = [""]  // 6
    var timeNanos: Int64 = 0  // 9
    var durationNanos: Int64 = 0  // 10
    var periodType: ValueType?  // 11
    var period: Int64 = 0  // 12
    var comments: [Int64] = []  // 13
    var defaultSampleType: Int64 = 0  // 14

    /// The serialized `Profile` message (not compressed).
    func encoded() -> [UInt8] {
        var out = ProtobufWriter()
        for type in sampleTypes { out.message(1) { Self.encode(type, into: &$0) } }
        for sample in samples {
            out.message(2) { message in
                message.packedUInt64(1, sample.locationIDs)
                message.packedInt64(2, sample.values)
                for label in sample.labels {
                    message.message(3) { field in
                        field.int64(1, label.key)
                        field.int64(2, label.str)
                        field.int64(3, label.num)
                        field.int64(4, label.numUnit)
                    }
                }
            }
        }
        for mapping in mappings {
            out.message(3) { message in
                message.uint64(1, mapping.id)
                message.uint64(2, mapping.memoryStart)
                message.uint64(3, mapping.memoryLimit)
                message.uint64(4, mapping.fileOffset)
                message.int64(5, mapping.filename)
                message.int64(6, mapping.buildID)
                message.bool(7, mapping.hasFunctions)
                message.bool(8, mapping.hasFilenames)
                message.bool(9, mapping.hasLineNumbers)
                message.bool(10, mapping.hasInlineFrames)
            }
        }
        for location in locations {
            out.message(4) { message in
                message.uint64(1, location.id)
                message.uint64(2, location.mappingID)
                message.uint64(3, location.address)
                for line in location.lines {
                    message.message(4) { field in
                        field.uint64(1, line.functionID)
                        field.int64(2, line.line)
                    }
                }
            }
        }
        for function in functions {
            out.message(5) { message in
                message.uint64(1, function.id)
                message.int64(2, function.name)
                message.int64(3, function.systemName)
                message.int64(4, function.filename)
                message.int64(5, function.startLine)
            }
        }
        for string in stringTable { out.string(6, string) }
        out.int64(9, timeNanos)
        out.int64(10, durationNanos)
        if let periodType { out.message(11) { Self.encode(periodType, into: &$0) } }
        out.int64(12, period)
        out.packedInt64(13, comments)
        out.int64(14, defaultSampleType)
        return out.bytes
    }

    private static func encode(_ type: ValueType, into message: inout ProtobufWriter) {
        message.int64(1, type.type)
        message.int64(2, type.unit)
    }
}
