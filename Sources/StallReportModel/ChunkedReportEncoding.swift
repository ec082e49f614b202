import Foundation

/// Encodes a report of many samples without `JSONEncoder` building its tree of every value of
/// them at once (gigabytes for a million samples): the report is encoded without samples, the
/// samples in chunks by the same encoder, and the chunks are put in place of the empty array,
/// indented as the whole document's encoding indents them. The bytes are the same as encoding
/// the whole report in one piece.
enum ChunkedReportEncoding {
    /// Samples encoded per piece.
    static let chunkSize = 10_000

    /// `report` encoded by `encode` (an encoder made by ``ReportCoding/makeEncoder(pretty:)``, or
    /// ``CompactJSONEncoder`` when not `pretty`), the samples `chunkSize` at a time; a report of
    /// no more samples than that in one piece.
    static func encode(
        _ report: StallReport, pretty: Bool, chunkSize: Int = chunkSize, with encode: (any Encodable) throws -> Data
    ) throws -> Data {
        guard report.samples.count > chunkSize else { return try encode(report) }
        var skeleton = report
        skeleton.samples = []
        var data = try encode(skeleton)
        guard let empty = emptySamples(in: data) else { return try encode(report) }
        // The samples are appended to the skeleton's bytes in place (no second copy of the
        // whole array): the part after the empty array is put back at the end.
        let rest = Data(data[empty.upperBound...])
        data.removeSubrange(empty.lowerBound...)
        data.append(UInt8(ascii: "["))
        var start = 0
        while start < report.samples.count {
            let end = min(start + chunkSize, report.samples.count)
            let chunk = try encode(Array(report.samples[start..<end]))
            // The elements between the chunk's brackets (and, pretty, its last newline).
            guard let open = chunk.firstIndex(of: UInt8(ascii: "[")), let close = chunk.lastIndex(of: UInt8(ascii: "]"))
            else {
                return try encode(report)
            }
            var inner = chunk[(open + 1)..<close]
            if pretty, inner.last == UInt8(ascii: "\n") { inner = inner.dropLast() }
            if start > 0 { data.append(UInt8(ascii: ",")) }
            if pretty {
                // One level deeper than a top-level array: strings hold no raw newline.
                for byte in inner {
                    data.append(byte)
                    if byte == UInt8(ascii: "\n") { data.append(contentsOf: [0x20, 0x20]) }
                }
            } else {
                data.append(contentsOf: inner)
            }
            start = end
        }
        data.append(contentsOf: Array((pretty ? "\n  ]" : "]").utf8))
        data.append(rest)
        return data
    }

    /// The empty array after the top-level `"samples"` key (a quote inside a string is escaped,
    /// so `"samples"` followed by `:` is only ever a key; the report's other objects have no
    /// key of that name).
    private static func emptySamples(in data: Data) -> Range<Data.Index>? {
        let key = Data(#""samples""#.utf8)
        guard let found = data.range(of: key) else { return nil }
        var index = found.upperBound
        func skipSpaces() {
            while index < data.endIndex, [0x20, 0x0A, 0x0D, 0x09].contains(data[index]) { index += 1 }
        }
        skipSpaces()
        guard index < data.endIndex, data[index] == UInt8(ascii: ":") else { return nil }
        index += 1
        skipSpaces()
        guard index < data.endIndex, data[index] == UInt8(ascii: "[") else { return nil }
        let open = index
        index += 1
        skipSpaces()
        guard index < data.endIndex, data[index] == UInt8(ascii: "]") else { return nil }
        return open..<(index + 1)
    }
}
