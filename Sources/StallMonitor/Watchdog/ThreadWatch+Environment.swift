import Glibc

extension ThreadWatch {
    /// What a watch reads and tells beyond its own thread, given at init and fixed for its life:
    /// the clocks and checks it asks (each replaceable, for tests that simulate a machine
    /// suspend, a thread's CPU clock or its context switches), where it says problems, and the
    /// reader of async callers it shares with the other watches.
    struct Environment {
        /// Time the machine has spent suspended since boot, nanoseconds.
        var machineSuspendedNanos: () -> UInt64 = SuspendClock.suspendedNanos
        /// The monitored thread's voluntary context switches (nil: read from `/proc`).
        var threadVoluntarySwitches: (() -> UInt64?)? = nil
        /// CPU time of a thread in nanoseconds, -1 when it cannot be read (nil: the sampler's).
        var threadCPUNanos: ((pid_t) -> Int64)? = nil
        /// Whether the sampling signal still runs the monitor's handler (nil: the sampler's).
        var samplingHandlerInstalled: (() -> Bool)? = nil
        /// Says a problem through the monitor's logger and statistics.
        var reportProblem: (StallMonitorError) -> Void = { _ in }
        /// Reads the async callers of samples that ran in a task (nil: not read, as for loops
        /// that run no tasks).
        var asyncChains: AsyncChainSource? = nil
    }
}
