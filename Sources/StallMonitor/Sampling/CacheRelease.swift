import CStallMonitor

/// Gives memory back once stalls have been quiet for a while: libdw's unwinding and
/// symbolication sessions (their CFI and DWARF caches and the files they mapped), the stack-copy
/// buffers, and the heap pages all that freed. The next stall opens new sessions.
enum CacheRelease {
    /// Releases what was last used at least `quiet` nanoseconds ago. Returns whether anything was
    /// released. Called on the writer queue by a timer of every running monitor.
    @discardableResult
    static func releaseIfQuiet(for quiet: UInt64, now: UInt64 = CStallMonitor_monotonic_ns()) -> Bool {
        guard now >= quiet else { return false }  // not that long since boot
        let unwinder = MonitorProcess.shared.unwinder.releaseIfUnused(since: now - quiet)
        let symbols = MonitorProcess.shared.symbolicator.releaseIfUnused(since: now - quiet)
        guard unwinder || symbols else { return false }
        StackSampler.withRequestLock { CStallMonitor_sampler_release_buffers() }
        _ = CStallMonitor_trim_heap()  // libdw's caches were freed to the heap: return its free pages
        return true
    }
}

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

extension CacheRelease {
    /// The release job of a monitor behind `gate` (opened by ``CacheUse/noteUse(_:)``): releases what
    /// has been quiet for `quiet` nanoseconds, then closes the gate when nothing was used since a
    /// release. Closed first and opened again if something was: a first use that comes between
    /// the two opens it itself.
    static func releaseJob(quiet: UInt64, gate: RepeatingTimer.Gate) {
        releaseIfQuiet(for: quiet)
        gate.close()
        if MonitorProcess.shared.unwinder.usedSinceRelease || MonitorProcess.shared.symbolicator.usedSinceRelease {
            gate.open()
        }
    }
}
