import CStallMonitor
import Glibc

/// Samples one monitored thread: reads its state and takes its stack the way that state allows
/// (asleep in the kernel: a copy of its frozen stack, ``sampleBlocked(_:files:unwinder:)``;
/// running: the sampling signal, ``sampleRunning(_:files:now:interval:unwinder:)``; unreadable:
/// nothing), remembering what it must between attempts. Used only on the watchdog thread.
final class ThreadSampler {
    /// What the sampler needs of the monitor's configuration.
    struct Settings {
        /// The sampling signal.
        var signal: Int32
        /// How long a signalled thread has to answer (ns).
        var sampleTimeout: UInt64
        /// Frames kept per stack.
        var maxFrames: Int
        /// Bytes of stack copied per snapshot.
        var stackCopyBytes: Int
        /// How running threads are unwound.
        var unwinding: StallMonitor.Unwinding
    }

    /// A reading of the thread while it ran on a CPU: when, its CPU time and voluntary switches.
    struct RunningReading {
        /// When it was read (monotonic ns).
        var at: UInt64
        /// Its CPU time (ns; -1: unknown).
        var cpu: Int64
        /// Its voluntary context switches.
        var switches: UInt64?
        /// Its time waiting for a CPU so far (ns), when known.
        var waiting: UInt64?
        /// Whether it has been clearly running since an earlier reading: it ran at least
        /// ``minimumRunBeforeSignal`` between two readings and has not slept since (no voluntary
        /// switch). Such a thread that ran less since the last reading was kept off the CPU
        /// (preempted), not asleep in or returning from a syscall.
        var proven = false
    }

    /// A thread found running is signalled only when it has run this much CPU time since the
    /// previous reading, without sleeping in between: a thread that just woke from a syscall reads
    /// as running while the kernel finishes the syscall (or while it waits for a CPU), and a signal
    /// then would cut the syscall short.
    static let minimumRunBeforeSignal: UInt64 = 100_000
    /// How soon a thread first found running is read again.
    static let lookAgainAfter: UInt64 = 1_000_000
    /// Attempts in a row that may find the process-wide sampler busy before a sample says so.
    static let maxBusyRetries = 8
    /// Most looks again at a thread kept off the CPU within one sample (one every
    /// ``lookAgainAfter``).
    static let maxOffCPURetries = 20
    /// A thread that waited for a CPU this share of the time since the last reading (or more) is
    /// contended: its answer to a signal comes when it next gets a CPU, so the wait for it is
    /// ``contendedTimeoutFactor`` times the sample timeout.
    static let contendedWaitingShare = 0.25
    /// How much longer a contended thread's answer is waited for.
    static let contendedTimeoutFactor: UInt64 = 4
    /// How long a thread stays contended after the last sign of it.
    static let contendedFor: UInt64 = 1_000_000_000

    let settings: Settings
    let counters: MonitorCounters
    /// Stack bounds of threads that armed themselves (the monitored thread's).
    let knownBounds: (Int32) -> SnapshotUnwinder.StackBounds?
    /// Stacks of threads that never armed themselves.
    var stacks = StackBoundsCache()
    /// The buffer libunwind's handler writes into.
    var frameBuffer: [UInt]
    /// The latest reading that found the thread running; nil after any reading that did not
    /// (asleep, unreadable), after a refused attempt and when tracking begins.
    var lastRunningReading: RunningReading?
    /// The thread's mask was seen blocking the sampling signal once, with no handler running:
    /// looked at again before the sample says so.
    var blockedMaskSeen = false
    /// Attempts in a row that found the process-wide sampler busy with another monitor's request
    /// (two watchdogs tracking stalls that began together sample in step): each is tried again
    /// after a short look-again delay, up to ``maxBusyRetries`` times, before the sample says so.
    var busyRetries = 0
    /// Looks again at a thread that has not slept but ran too little since the last reading to
    /// be signalled (kept off the CPU on a loaded machine), before the sample says so.
    var offCPURetries = 0
    /// Until when (monotonic ns) the thread counts as contended: it waited for a CPU for a good
    /// share of a recent reading's interval, or did not answer a signal in time. Its answers are
    /// then waited for longer.
    var contendedUntil: UInt64 = 0
    /// CPU time of a thread in nanoseconds, -1 when it cannot be read (replaced in tests).
    var threadCPUNanos: (pid_t) -> Int64 = CStallMonitor_thread_cpu_ns
    /// Whether the sampling signal still runs the monitor's handler (replaced in tests).
    var samplingHandlerInstalled: () -> Bool = { CStallMonitor_sampler_handler_installed() != 0 }

    /// A sampler with `settings`, counting stacks in `counters`; `knownBounds` gives the stacks
    /// of threads that armed themselves.
    init(settings: Settings, counters: MonitorCounters, knownBounds: @escaping (Int32) -> SnapshotUnwinder.StackBounds?)
    {
        self.settings = settings
        self.counters = counters
        self.knownBounds = knownBounds
        self.frameBuffer = [UInt](repeating: 0, count: settings.maxFrames)
    }

    /// Forgets what earlier readings found (a new span, or another thread).
    func forgetReadings() {
        lastRunningReading = nil
        blockedMaskSeen = false
    }

    /// Forgets thread `tid` (the watch meets another thread by that id, or a new one).
    func forgetThread(_ tid: Int32) {
        stacks.forget(tid)
        forgetReadings()
    }

    /// Attempts one sample of the thread of `files` at `now`, for a stall whose span began at
    /// `spanStart` and is sampled every `interval` with `unwinder`: what it gave, and what was
    /// read of the thread first.
    func sample(
        _ files: ThreadProcFiles, now: UInt64, spanStart: UInt64, interval: UInt64,
        unwinder: SamplingUnwinder
    ) -> (SampleOutcome, SampleReading) {
        let reading = SampleReading(files, now: now, spanStart: spanStart)
        switch reading.syscallState {
        case .inSyscall(_, let sp, let pc), .blockedOutsideSyscall(let sp, let pc):
            lastRunningReading = nil
            return (sampleBlocked(reading, sp: sp, pc: pc, files: files, unwinder: unwinder), reading)
        case .running:
            return (sampleRunning(reading, files: files, now: now, interval: interval, unwinder: unwinder), reading)
        case .unknown:
            lastRunningReading = nil
            return (.noStack(.threadUnreadable, note: "the thread's /proc files could not be read"), reading)
        }
    }

    /// The stack bounds of thread `tid` whose stack pointer is `sp` (nil: not known).
    func stackBounds(of tid: Int32, sp: UInt?) -> SnapshotUnwinder.StackBounds? {
        stacks.bounds(of: tid, sp: sp, known: knownBounds(tid))
    }

    /// Counts a stack the sampler took and unwound, begun at `began`.
    func countStack(since began: UInt64) {
        counters.stacksTaken.add(1, ordering: .relaxed)
        counters.stackNanoseconds.add(Int(CStallMonitor_monotonic_ns() &- began), ordering: .relaxed)
    }
}
