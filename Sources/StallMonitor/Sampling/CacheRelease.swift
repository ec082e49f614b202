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
