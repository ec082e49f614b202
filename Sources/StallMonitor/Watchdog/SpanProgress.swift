/// How far a ``ThreadWatch`` has dealt with its thread's spans: the last span it finished with
/// (reported or discarded), and where it stands in the tracker's log of ended long spans
/// (``EndedSpanLog``), so that spans the log overwrote before the watch got to them are counted.
/// Changed only through its transitions, each named for what the watch did.
struct SpanProgress: Equatable {
    /// The sequence of the last span the watch finished with.
    private(set) var lastFinished: UInt64 = 0
    /// Publishing index of the first long span the watch has not dealt with: a missed span found
    /// with a higher index means the ones between were overwritten.
    private(set) var nextUnchecked: UInt64 = 0
    /// The index the tracked span gets when it is published (nothing else can be published
    /// between the start of tracking and its end).
    private var trackedIndex: UInt64 = 0

    /// Whether span `sequence` (open or suspended now) is one the watch has still to deal with.
    func isPending(_ sequence: UInt64) -> Bool { sequence != lastFinished }

    /// How many long spans the log overwrote before the watch got to them, when the oldest it
    /// still holds after ``lastFinished`` has index `oldest`.
    func overwritten(oldest: UInt64) -> Int { oldest > nextUnchecked ? Int(oldest - nextUnchecked) : 0 }

    /// Span `sequence` ended, or its thread exited, before the watch tracked it, and it will not be
    /// reported; `published`: how many spans the log has published now.
    mutating func finishedUntracked(_ sequence: UInt64, published: UInt64) {
        lastFinished = sequence
        nextUnchecked = max(nextUnchecked, published)
    }

    /// The watch begins tracking a span; the log has published `published` spans now.
    mutating func beganTracking(published: UInt64) {
        trackedIndex = published
    }

    /// The tracked span `sequence` ended (reported or discarded): it is published, or will be,
    /// at the index it got when tracking began, unless the monitor stops first.
    mutating func finishedTracked(_ sequence: UInt64) {
        lastFinished = sequence
        nextUnchecked = max(nextUnchecked, trackedIndex &+ 1)
    }

    /// A long span the watch never tracked (log index `index`) was taken from the log.
    mutating func finishedMissed(_ sequence: UInt64, index: UInt64) {
        lastFinished = sequence
        nextUnchecked = index &+ 1
    }

    /// The span still open or suspended when the monitor stops (never published) is reported
    /// or dropped now.
    mutating func finishedAtStop(_ sequence: UInt64) {
        lastFinished = sequence
    }
}
