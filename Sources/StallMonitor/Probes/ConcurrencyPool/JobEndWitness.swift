import CStallMonitor

/// What a pool worker's scheduler accounting said at a look while it ran a job, so that a later
/// look, however late, can tell when the job ended when the worker went idle right after it.
///
/// A job that ends between two looks is dated in the middle of their interval, which is half an
/// interval off at most: 2.5 ms at the default 5 ms, but half a second after a watchdog starved
/// for a second (a sanitizer's runtime, a slow unwind, more CPU-bound threads than CPUs), enough
/// to report a 150 ms job as a 260 ms stall. The kernel counts, per thread, the time it was
/// runnable (on a CPU or waiting for one: `schedstat`) and its voluntary context switches
/// (`status`). When the worker was runnable at the earlier look, sleeps at the later one, and has
/// slept exactly once since, that one sleep is the one it is in: it ran without sleeping from the
/// earlier reading until it fell asleep, so it stopped running the job no later than that reading
/// plus the runnable time since. The witness is read only for a job old enough to matter (the
/// probe's choice), three `pread`s of files kept open (`stat`, `status`, `schedstat`: its own,
/// so that the probe reads nothing of the watch that samples the same worker).
///
/// The bound is an upper one: another short job the worker ran before sleeping, or the idle path
/// of libdispatch, lie before it too, so the probe takes the earlier of it and the middle. Time
/// the hypervisor took from the worker (steal time) is not counted as runnable, so on a virtual
/// machine the bound can be early by that much.
struct JobEndWitness {
    /// The worker's files, kept open from one look to the next while it runs an old job.
    let files: ThreadProcFiles
    /// The clock just before the reading.
    let readAt: UInt64
    /// Time runnable since the worker started, and its voluntary context switches, then.
    let runnable: UInt64
    let voluntarySwitches: UInt64

    /// The longest a reading may take for the witness to count: its time bounds the error.
    static let longestReading: UInt64 = 1_000_000

    /// Reads worker `tid`'s accounting (with the files of `previous`, when there is one); nil when
    /// the worker is not runnable now (asleep in a call of its job: the runnable time then says
    /// nothing of when the job ended), a file cannot be read, or the reading took too long.
    static func read(tid: Int32, keeping previous: JobEndWitness?) -> JobEndWitness? {
        let files = previous?.files ?? ThreadProcFiles(tid: tid, syscall: false)
        let readAt = CStallMonitor_monotonic_ns()
        // Runnable time first and the state last: a sleep that began before the state was read
        // and is still going on makes the state say so.
        guard let runnable = files.runnableNanos(), let switches = files.voluntarySwitches(),
            files.schedulerState() == .running, CStallMonitor_monotonic_ns() &- readAt <= longestReading
        else { return nil }
        return JobEndWitness(files: files, readAt: readAt, runnable: runnable, voluntarySwitches: switches)
    }

    /// When the worker, seen idle at a look at `now`, stopped running: the reading's time plus the
    /// time it has been runnable since, when it sleeps now and has slept once since the reading
    /// (never after `now`); nil when the accounting cannot tell.
    func stoppedRunning(before now: UInt64) -> UInt64? {
        guard let runnableNow = files.runnableNanos(), let switches = files.voluntarySwitches(),
            switches &- voluntarySwitches == 1, runnableNow >= runnable, files.schedulerState() == .sleeping
        else { return nil }
        return min(now, readAt &+ (runnableNow - runnable))
    }
}
