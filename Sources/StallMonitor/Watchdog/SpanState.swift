/// A tracker's span state in one atomic word: which span (numbered from 1) and its phase. The
/// only place that knows the packing (`sequence << 2 | phase`).
struct SpanState: RawRepresentable, Equatable, Sendable {
    /// Where the span numbered ``sequence`` is.
    enum Phase: UInt64 {
        /// Ended (or none began yet: sequence 0).
        case closed = 0
        /// Awake: the loop runs the span's work.
        case open = 1
        /// The loop waits or left its run; the span goes on if it is awake again soon enough.
        case suspended = 2
    }

    let rawValue: UInt64

    @_transparent init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Before any span.
    static let initial = SpanState(rawValue: 0)

    /// The span's number (0: none began yet).
    @_transparent var sequence: UInt64 { rawValue >> 2 }

    /// The span's phase.
    @_transparent var phase: Phase { Phase(rawValue: rawValue & 3) ?? .closed }

    /// Whether the span is awake now.
    @_transparent var isOpen: Bool { rawValue & 3 == Phase.open.rawValue }

    /// Whether the span ended (or none began).
    @_transparent var isClosed: Bool { rawValue & 3 == Phase.closed.rawValue }

    /// The same span in `phase`.
    @_transparent func with(_ phase: Phase) -> SpanState {
        SpanState(rawValue: (rawValue & ~3) | phase.rawValue)
    }

    /// The next span, open.
    @_transparent func nextOpen() -> SpanState {
        SpanState(rawValue: ((sequence &+ 1) << 2) | Phase.open.rawValue)
    }

    /// The span a mark made now applies to: this one, or the next when this one is closed (a
    /// pull probe's span the watchdog has not seen begin yet).
    var sequenceOfCurrentOrNext: UInt64 { isClosed ? sequence &+ 1 : sequence }
}
