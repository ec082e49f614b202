import Synchronization

/// The voluntary context switches of a simulated monitored thread, for trackers and watchdogs
/// driven by hand: by default the thread slept between any two looks (every call returns a new
/// count), as a loop that pauses for longer than the grace does; with ``preempted`` set it never
/// gives up the CPU (a pause is a preemption on a busy machine).
final class SimulatedSwitches: Sendable {
    private let count = Atomic<UInt64>(0)
    /// While set, the count stays the same.
    let preempted = Atomic<Bool>(false)

    /// The count now.
    func next() -> UInt64 {
        preempted.load(ordering: .relaxed) ? count.load(ordering: .relaxed) : count.add(1, ordering: .relaxed).newValue
    }
}
