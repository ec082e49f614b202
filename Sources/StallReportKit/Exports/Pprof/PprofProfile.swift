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

    /// Fields 1 (`sample_type`) and 2 (`sample`), encoded as they are added: a million samples
    /// are held as their bytes, not as a message (and arrays) each.
    private var head = ProtobufWriter()
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

    /// Sets the sample types; before any ``append(_:)``, once.
    mutating func setSampleTypes(_ types: [ValueType]) {
        head.messages(1, types)
    }

    /// Adds a sample (after ``setSampleTypes(_:)``).
    mutating func append(_ sample: Sample) {
        head.messages(2, [sample])
    }

    /// The serialized `Profile` message (not compressed). The encoded samples are taken, not
    /// copied: call it once.
    mutating func encoded() -> [UInt8] {
        var out = ProtobufWriter()
        swap(&out, &head)
        out.messages(3, mappings)
        out.messages(4, locations)
        out.messages(5, functions)
        for string in stringTable { out.string(6, string) }
        out.int64(9, timeNanos)
        out.int64(10, durationNanos)
        if let periodType { out.messages(11, [periodType]) }
        out.int64(12, period)
        out.packedInt64(13, comments)
        out.int64(14, defaultSampleType)
        return out.bytes
    }
}

// The wire encoding of each message: its fields in field-number order.

extension PprofProfile.ValueType: ProtobufMessage {
    var fields: [ProtobufField] { [.int64(1, type), .int64(2, unit)] }
}

extension PprofProfile.Label: ProtobufMessage {
    var fields: [ProtobufField] { [.int64(1, key), .int64(2, str), .int64(3, num), .int64(4, numUnit)] }
}

extension PprofProfile.Sample: ProtobufMessage {
    var fields: [ProtobufField] { [.packedUInt64(1, locationIDs), .packedInt64(2, values), .messages(3, labels)] }
}

extension PprofProfile.Mapping: ProtobufMessage {
    var fields: [ProtobufField] {
        [
            .uint64(1, id), .uint64(2, memoryStart), .uint64(3, memoryLimit), .uint64(4, fileOffset),
            .int64(5, filename), .int64(6, buildID),
            .bool(7, hasFunctions), .bool(8, hasFilenames), .bool(9, hasLineNumbers), .bool(10, hasInlineFrames),
        ]
    }
}

extension PprofProfile.Line: ProtobufMessage {
    var fields: [ProtobufField] { [.uint64(1, functionID), .int64(2, line)] }
}

extension PprofProfile.Location: ProtobufMessage {
    var fields: [ProtobufField] { [.uint64(1, id), .uint64(2, mappingID), .uint64(3, address), .messages(4, lines)] }
}

extension PprofProfile.Function: ProtobufMessage {
    var fields: [ProtobufField] {
        [.uint64(1, id), .int64(2, name), .int64(3, systemName), .int64(4, filename), .int64(5, startLine)]
    }
}
