import Synchronization

/// A span that ended after running longer than the tracker's `publishAfter`.
struct EndedSpan: Equatable {
    var sequence: UInt64
    /// Its place in publishing order (0 for the first span published).
    var index: UInt64 = 0
    var start: UInt64
    var end: UInt64
    var passes: Int
    var longestPass: UInt64
    /// The kernel id of the thread that ran it, when the loop's thread changes from span to span
    /// (``SpanTracker/spanThread``); 0: the loop's own thread.
    var thread: Int32 = 0
}

/// The long spans that ended most recently, for the watchdog: a ring of ``capacity`` slots filled
/// in publishing order (slot = index mod capacity, so it holds the last ``capacity`` long spans
/// however many short ones came between), written only by the monitored thread (atomic stores,
/// no locks, no allocation) and read by the watchdog. Each slot is a seqlock keyed by its span's
/// sequence number (0 while being rewritten), so a reader never takes fields of two spans for one.
///
/// The watchdog reads the end of the span it tracks from here, and a watchdog that got no CPU
/// for a while finds every long span it missed (up to ``capacity`` of them) and reports them;
/// ``publishedCount`` and each span's index tell it how many were overwritten before it looked.
final class EndedSpanLog: Sendable {
    /// How many ended spans are kept.
    static let capacity = 16

    private let sequences: InlineArray<16, Atomic<UInt64>>
    private let starts: InlineArray<16, Atomic<UInt64>>
    private let ends: InlineArray<16, Atomic<UInt64>>
    private let passes: InlineArray<16, Atomic<Int>>
    private let longestPasses: InlineArray<16, Atomic<UInt64>>
    private let threads: InlineArray<16, Atomic<Int32>>
    private let indices: InlineArray<16, Atomic<UInt64>>
    /// Spans published so far (the index the next one gets); stored by the monitored thread only.
    private let published = Atomic<UInt64>(0)

    init() {
        sequences = InlineArray { _ in Atomic(0) }
        starts = InlineArray { _ in Atomic(0) }
        ends = InlineArray { _ in Atomic(0) }
        passes = InlineArray { _ in Atomic(0) }
        longestPasses = InlineArray { _ in Atomic(0) }
        threads = InlineArray { _ in Atomic(0) }
        indices = InlineArray { _ in Atomic(0) }
    }

    /// How many spans have been published; the next one gets this index.
    var publishedCount: UInt64 { published.load(ordering: .acquiring) }

    /// Publishes `span` (monitored thread only; its `index` is assigned here). The release fence
    /// after marking the slot as being written keeps a reader that sees any new field from also
    /// seeing the old sequence.
    @inline(__always)
    func publish(_ span: EndedSpan) {
        let index = published.load(ordering: .relaxed)
        let slot = Int(index % UInt64(Self.capacity))
        sequences[slot].store(0, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        starts[slot].store(span.start, ordering: .relaxed)
        ends[slot].store(span.end, ordering: .relaxed)
        passes[slot].store(span.passes, ordering: .relaxed)
        longestPasses[slot].store(span.longestPass, ordering: .relaxed)
        threads[slot].store(span.thread, ordering: .relaxed)
        indices[slot].store(index, ordering: .relaxed)
        sequences[slot].store(span.sequence, ordering: .releasing)
        published.store(index &+ 1, ordering: .releasing)
    }

    /// Span `sequence`, when it was published and has not been overwritten since.
    func span(_ sequence: UInt64) -> EndedSpan? {
        guard sequence != 0 else { return nil }
        for slot in 0..<Self.capacity where sequences[slot].load(ordering: .relaxed) == sequence {
            return read(slot: slot, sequence: sequence)
        }
        return nil
    }

    /// The kept spans with a sequence number above `sequence`, oldest first.
    func spans(after sequence: UInt64) -> [EndedSpan] {
        var found: [EndedSpan] = []
        for slot in 0..<Self.capacity {
            let candidate = sequences[slot].load(ordering: .relaxed)
            if candidate > sequence, let span = read(slot: slot, sequence: candidate) { found.append(span) }
        }
        return found.sorted { $0.sequence < $1.sequence }
    }

    /// The span in `slot` when it still is span `sequence` before and after the fields are read.
    private func read(slot: Int, sequence: UInt64) -> EndedSpan? {
        guard sequences[slot].load(ordering: .acquiring) == sequence else { return nil }
        let span = EndedSpan(
            sequence: sequence,
            index: indices[slot].load(ordering: .relaxed),
            start: starts[slot].load(ordering: .relaxed),
            end: ends[slot].load(ordering: .relaxed),
            passes: passes[slot].load(ordering: .relaxed),
            longestPass: longestPasses[slot].load(ordering: .relaxed),
            thread: threads[slot].load(ordering: .relaxed))
        atomicMemoryFence(ordering: .acquiring)
        guard sequences[slot].load(ordering: .relaxed) == sequence else { return nil }
        return span
    }
}
