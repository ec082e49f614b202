/// The frame indices of one sample (``StallReport/Sample/frames``): an array of its own, or a
/// range of one buffer shared by every sample of a decoded report. A report of a million samples
/// with a distinct 20-frame stack each is then 4 bytes an index in one allocation (80 MB), not a
/// million arrays of 8-byte indices (about 290 MB). Encoded and compared as the array it holds.
package struct FrameIndices: Sendable, Hashable, Codable, RandomAccessCollection {
    /// The frame indices of many samples, one after another.
    package final class Buffer: Sendable {
        /// The indices.
        package let indices: [UInt32]

        /// A buffer of `indices`.
        package init(_ indices: [UInt32]) { self.indices = indices }
    }

    fileprivate enum Storage: Sendable {
        case array([Int])
        case packed(Buffer, start: UInt32, count: UInt32)
    }

    private var storage: Storage

    /// The indices of `array`.
    package init(_ array: [Int]) { storage = .array(array) }

    /// The indices `buffer.indices[range]`; the range must lie in the buffer and end at or
    /// before `UInt32.max`.
    package init(_ buffer: Buffer, range: Range<Int>) {
        precondition(
            range.lowerBound >= 0 && range.upperBound <= buffer.indices.count && range.upperBound <= Int(UInt32.max))
        storage = .packed(buffer, start: UInt32(range.lowerBound), count: UInt32(range.count))
    }

    /// The indices as an array (a new one for indices in a shared buffer).
    package var array: [Int] {
        switch storage {
        case .array(let array): return array
        case .packed(let buffer, let start, let count):
            return buffer.indices[Int(start)..<Int(start + count)].map { Int($0) }
        }
    }

    /// The shared buffer and the range of it these indices are, or nil for an array of their own.
    package var shared: (buffer: Buffer, range: Range<Int>)? {
        guard case .packed(let buffer, let start, let count) = storage else { return nil }
        return (buffer, Int(start)..<Int(start + count))
    }

    /// Number of indices.
    package var count: Int {
        switch storage {
        case .array(let array): return array.count
        case .packed(_, _, let count): return Int(count)
        }
    }

    /// The first position: 0.
    package var startIndex: Int { 0 }

    /// The position after the last index.
    package var endIndex: Int { count }

    /// The index at `position`.
    package subscript(position: Int) -> Int {
        switch storage {
        case .array(let array): return array[position]
        case .packed(let buffer, let start, let count):
            precondition(position >= 0 && position < Int(count), "index out of range")
            return Int(buffer.indices[Int(start) + position])
        }
    }

    /// The indices in order, the storage looked at once (not at every index).
    package struct Iterator: IteratorProtocol {
        private var array: IndexingIterator<[Int]>?
        private var packed: IndexingIterator<ArraySlice<UInt32>>?

        fileprivate init(_ storage: Storage) {
            switch storage {
            case .array(let array): self.array = array.makeIterator()
            case .packed(let buffer, let start, let count):
                packed = buffer.indices[Int(start)..<Int(start + count)].makeIterator()
            }
        }

        /// The next index, or nil after the last.
        package mutating func next() -> Int? {
            if array != nil { return array!.next() }
            return packed!.next().map { Int($0) }
        }
    }

    /// An iterator over the indices.
    package func makeIterator() -> Iterator { Iterator(storage) }

    /// Equal when they hold the same indices, however stored.
    package static func == (lhs: FrameIndices, rhs: FrameIndices) -> Bool {
        switch (lhs.storage, rhs.storage) {
        case (.array(let a), .array(let b)): return a == b
        case (.packed(let a, let aStart, let aCount), .packed(let b, let bStart, let bCount)):
            guard aCount == bCount else { return false }
            if a === b && aStart == bStart { return true }
            return a.indices[Int(aStart)..<Int(aStart + aCount)] == b.indices[Int(bStart)..<Int(bStart + bCount)]
        default: return lhs.count == rhs.count && lhs.elementsEqual(rhs)
        }
    }

    /// Hashes the indices, as an array of them would.
    package func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for index in self { hasher.combine(index) }
    }

    /// Decodes the array of indices.
    package init(from decoder: any Decoder) throws {
        storage = .array(try decoder.singleValueContainer().decode([Int].self))
    }

    /// Encodes the array of indices.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(array)
    }
}
