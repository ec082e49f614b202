import Foundation

/// Decodes a large report without Foundation's `JSONDecoder` holding a map of every value of its
/// `samples` (which took about four times the file's size for a report of a million samples):
/// the samples are read with ``JSONByteCursor`` straight into ``StallReport/Sample`` values, their
/// frame indices into one buffer of 4-byte ids that they share (`FrameIndices`), the rest of the
/// document, with `"samples": []` in their place, by the ordinary decoder.
///
/// Only the plain shape is read this way: anything unusual in a sample (a missing or repeated
/// key, a wrong type, a negative index, a number out of range) is a miss, and the caller decodes
/// the whole file the ordinary way, so errors are worded as they always were. The result is the
/// ordinary decoder's, validation included.
enum LargeReportDecoder {
    /// Files smaller than this are decoded the ordinary way.
    static let minimumSize = 1 << 20

    private static let topKeys = KeyTable(["samples"])
    private static let sampleKeys = KeyTable([
        "offsetMs", "kind", "threadState", "syscall", "note", "frames", "truncated", "unwinder", "interrupted",
        "asyncCallers", "asyncJobFrames", "asyncCallersFromJobStart", "asyncJobCallers",
    ])

    /// The report in `data`, or nil when it is smaller than `minimumSize` or not of the plain
    /// shape (then decode it the ordinary way).
    static func decode(_ data: Data, depthLimit: Int, minimumSize: Int = LargeReportDecoder.minimumSize) -> StallReport?
    {
        guard data.count >= minimumSize else { return nil }
        let found: (samples: [StallReport.Sample], range: Range<Int>)? = data.withUnsafeBytes { raw in
            do throws(FastPathMiss) {
                var cursor = try JSONByteCursor(raw, depthLimit: depthLimit)
                var found: (samples: [StallReport.Sample], range: Range<Int>)?
                try cursor.forEachMember { cursor, key throws(FastPathMiss) in
                    guard try cursor.keyIndex(key, in: topKeys) == 0 else {
                        try cursor.skipValue()
                        return
                    }
                    guard found == nil else { throw FastPathMiss() }
                    _ = cursor.peek()
                    let start = cursor.position
                    let samples = try Self.samples(&cursor)
                    found = (samples, start..<cursor.position)
                }
                guard cursor.peek() == 0 else { throw FastPathMiss() }
                return found
            } catch {
                return nil
            }
        }
        guard let found else { return nil }
        var rest = Data()
        rest.reserveCapacity(data.count - found.range.count + 2)
        rest.append(data[data.startIndex..<data.startIndex + found.range.lowerBound])
        rest.append(contentsOf: Array("[]".utf8))
        rest.append(data[(data.startIndex + found.range.upperBound)...])
        guard var report = try? StallReport.decode(from: rest) else { return nil }
        report.samples = found.samples
        guard report.schemaViolation == nil else { return nil }
        return report
    }

    /// The `samples` array, every sample's frame indices in one shared buffer.
    private static func samples(_ cursor: inout JSONByteCursor) throws(FastPathMiss) -> [StallReport.Sample] {
        // Counted first, so the arrays are allocated once at their size (no doubling at the end).
        var counter = cursor
        var count = 0
        var indexCount = 0
        try counter.forEachElement { counter throws(FastPathMiss) in
            try counter.forEachMember { counter, key throws(FastPathMiss) in
                guard try counter.keyIndex(key, in: framesKey) == 0, counter.peek() == UInt8(ascii: "[") else {
                    try counter.skipValue()
                    return
                }
                try counter.forEachElement { counter throws(FastPathMiss) in
                    try counter.skipValue()
                    indexCount += 1
                }
            }
            count += 1
        }
        var samples: [StallReport.Sample] = []
        samples.reserveCapacity(count)
        var frames = PackedFrames(samples: count, indices: indexCount)
        var callers = IndexArrays()
        try cursor.forEachElement { cursor throws(FastPathMiss) in
            samples.append(try sample(&cursor, frames: &frames, callers: &callers))
        }
        let buffer = FrameIndices.Buffer(frames.indices)
        for index in samples.indices {
            let (start, count) = frames.ranges[index]
            samples[index].frameIndices = FrameIndices(buffer, range: Int(start)..<Int(start + count))
        }
        return samples
    }

    private static let framesKey = KeyTable(["frames"])

    /// One sample, as its `Codable` conformance reads it (unknown keys passed over); its frames
    /// are added to `frames` (the sample's own are left empty).
    private static func sample(
        _ cursor: inout JSONByteCursor, frames packed: inout PackedFrames,
        callers scratch: inout IndexArrays
    ) throws(FastPathMiss) -> StallReport.Sample {
        var offsetMs: Double?
        var kind: String?
        var threadState: String?
        var syscall: String?
        var note: String?
        var frames = false
        var truncated: Bool?
        var unwinder: String?
        var interrupted: Bool?
        var asyncCallers: [Int]?
        var asyncJobFrames: Int?
        var fromJobStart: Bool?
        var jobCallers: Int?
        var seen: UInt32 = 0
        try cursor.forEachMember { cursor, key throws(FastPathMiss) in
            guard let index = try cursor.keyIndex(key, in: sampleKeys) else {
                try cursor.skipValue()
                return
            }
            guard seen & (1 << UInt32(index)) == 0 else { throw FastPathMiss() }
            seen |= 1 << UInt32(index)
            switch index {
            case 0: offsetMs = try cursor.double()
            case 1: kind = try cursor.string()
            case 2: threadState = try cursor.string()
            case 3: syscall = try cursor.takeNull() ? nil : try cursor.string()
            case 4: note = try cursor.takeNull() ? nil : try cursor.string()
            case 5:
                try packed.add(&cursor)
                frames = true
            case 6: truncated = try cursor.takeNull() ? nil : try cursor.bool()
            case 7: unwinder = try cursor.takeNull() ? nil : try cursor.string()
            case 8: interrupted = try cursor.takeNull() ? nil : try cursor.bool()
            case 9: asyncCallers = try cursor.takeNull() ? nil : try indices(&cursor, scratch: &scratch)
            case 10: asyncJobFrames = try cursor.takeNull() ? nil : try cursor.int()
            case 11: fromJobStart = try cursor.takeNull() ? nil : try cursor.bool()
            default: jobCallers = try cursor.takeNull() ? nil : try cursor.int()
            }
        }
        guard let offsetMs, let kind, let threadState, frames else { throw FastPathMiss() }
        return StallReport.Sample(
            offsetMs: offsetMs, kind: .init(rawValue: kind), threadState: threadState, syscall: syscall, note: note,
            frames: [], truncated: truncated, unwinder: unwinder, interrupted: interrupted,
            asyncCallers: asyncCallers, asyncJobFrames: asyncJobFrames, asyncCallersFromJobStart: fromJobStart,
            asyncJobCallers: jobCallers)
    }

    /// The frame indices of every sample, one after another, 4 bytes each; a stack equal to one
    /// read before (the samples of a stall repeat few stacks) takes the earlier one's range.
    private struct PackedFrames {
        /// Distinct stacks kept for sharing; past this many, new ones are not remembered.
        static let limit = 4096
        var indices: [UInt32] = []
        /// Each sample's range of ``indices``: start and count (8 bytes a sample).
        var ranges: [(start: UInt32, count: UInt32)] = []
        /// Stacks read so far (copies: a slice of ``indices`` would make every append copy it).
        var known: [[UInt32]: Range<Int>] = [:]

        init(samples: Int, indices count: Int) {
            indices.reserveCapacity(count)
            ranges.reserveCapacity(samples)
        }

        /// Reads one sample's array of frame indices.
        mutating func add(_ cursor: inout JSONByteCursor) throws(FastPathMiss) {
            let start = indices.count
            try cursor.forEachElement { cursor throws(FastPathMiss) in
                let index = try cursor.int()
                guard index <= UInt32.max else { throw FastPathMiss() }
                indices.append(UInt32(index))
            }
            guard indices.count <= UInt32.max else { throw FastPathMiss() }
            let range = start..<indices.count
            let stack = Array(indices[range])
            let earlier = known[stack]
            if earlier != nil { indices.removeLast(range.count) }
            if earlier == nil && known.count < Self.limit { known[stack] = range }
            let taken = earlier ?? range
            ranges.append((UInt32(taken.lowerBound), UInt32(taken.count)))
        }
    }

    /// Arrays of async callers' frame indices, shared between samples that have the same ones.
    private struct IndexArrays {
        /// Distinct arrays kept for sharing; past this many, new ones are not remembered.
        static let limit = 4096
        var scratch: [Int] = []
        var known: Set<[Int]> = []

        /// `scratch`'s elements as an array of exactly their count, or an equal one read before.
        mutating func take() -> [Int] {
            let array = Array(scratch[...])
            if let existing = known.firstIndex(of: array) { return known[existing] }
            if known.count < Self.limit { known.insert(array) }
            return array
        }
    }

    /// An array of frame indices.
    private static func indices(
        _ cursor: inout JSONByteCursor, scratch: inout IndexArrays
    ) throws(FastPathMiss) -> [Int] {
        scratch.scratch.removeAll(keepingCapacity: true)
        try cursor.forEachElement { cursor throws(FastPathMiss) in
            scratch.scratch.append(try cursor.int())
        }
        return scratch.take()
    }
}
