/// What a ``ThreadWatch`` does at a look about the open or suspended span of its thread that it
/// does not track yet: a value computed from the span, the time and the settings alone (the one
/// fact read from outside, whether the thread slept since the span began, is asked only when it
/// decides).
enum UntrackedSpanAction: Equatable {
    /// Nothing is due: the span ended past its lead before the watch got to it (the tracker
    /// publishes it when the loop wakes again, and the watch reports it from the log then).
    case none
    /// Nothing is due before `at`: the sampling lead, or the end of the re-entry grace of a
    /// suspended span that may still go on.
    case lookAgain(at: UInt64)
    /// The span ended before its lead: the watch is done with it.
    case finishShort
    /// The span has lasted its lead: the watch tracks and samples it.
    case track

    /// The action at `now` for a span begun at `start`, suspended at `suspendedAt` when
    /// `suspended`. A suspended span has ended once the re-entry grace passed and the thread
    /// slept since it began (`threadSlept`); one that did not sleep was preempted between two
    /// passes and goes on.
    static func at(
        _ now: UInt64, start: UInt64, suspended: Bool, suspendedAt: UInt64, lead: UInt64, reentryGrace: UInt64,
        threadSlept: () -> Bool
    ) -> UntrackedSpanAction {
        if suspended {
            let expiry = suspendedAt &+ reentryGrace
            if now < expiry {
                if start &+ lead > suspendedAt { return .lookAgain(at: expiry) }
            } else if threadSlept() {
                return suspendedAt &- start < lead ? .finishShort : .none
            }
        }
        let trackFrom = start &+ lead
        return now < trackFrom ? .lookAgain(at: trackFrom) : .track
    }
}
