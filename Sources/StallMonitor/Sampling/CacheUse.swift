import CStallMonitor

/// The running monitors' cache-release gates: the release job of a monitor runs only while the
/// symbolicator or the unwinder was used since their last release, so an idle process whose
/// monitor never sampled a stall never wakes for it (its timer and writer slept through a job
/// every `releaseCachesAfter / 2`). A first use after a release opens every gate; a job that
/// finds nothing used since closes its own.
final class CacheUse: Sendable {
    private let gates = Locked<[ObjectIdentifier: RepeatingTimer.Gate]>([:])

    /// Adds a monitor's gate (at its start).
    func add(_ gate: RepeatingTimer.Gate) {
        gates.withLock { $0[ObjectIdentifier(gate)] = gate }
    }

    /// Removes it (at its monitor's stop).
    func remove(_ gate: RepeatingTimer.Gate) {
        _ = gates.withLock { $0.removeValue(forKey: ObjectIdentifier(gate)) }
    }

    /// Notes a use of the symbolicator or the unwinder now in its `lastUse` (monotonic ns; 0:
    /// not used since its last release); the first use since that release opens every gate.
    /// Called with their lock held: takes only the gates' own locks.
    func noteUse(_ lastUse: inout UInt64) {
        if lastUse == 0 {
            for gate in gates.withLock({ Array($0.values) }) { gate.open() }
        }
        lastUse = CStallMonitor_monotonic_ns()
    }
}
