import CStallMonitor
import Glibc
import StallReportModel

/// The process-wide sampling signal handler seen from Swift: install and uninstall (reference
/// counted across monitors), and one sampling request at a time across every watchdog.
enum StackSampler {
    /// Result of one request.
    enum Outcome {
        case stack([UInt], truncated: Bool)
        case timedOut
        case busy
        case unavailable
        case sendFailed
        /// The signal no longer runs the monitor's handler (the host replaced it, or set SIG_DFL or
        /// SIG_IGN): nothing was sent.
        case handlerReplaced
    }

    /// Serializes requests of several watchdogs; held at most for one request's deadline.
    private static let requestLock = Locked<Void>(())

    /// Installs the handler; returns the signal in use.
    static func install(signal: Int32?) throws(StallMonitorError) -> Int32 {
        var message = [CChar](repeating: 0, count: 256)
        let result = CStallMonitor_sampler_install(signal ?? 0, &message, message.count)
        guard result > 0 else {
            throw .signalUnavailable(CString.decode(message))
        }
        return result
    }

    /// Installs the handler for watching Dispatch workers: `SIGPROF` when no signal is asked for,
    /// no monitor has installed the handler yet and `SIGPROF` has no handler, because libdispatch
    /// blocks every other asynchronous signal on its workers but leaves `SIGPROF` to profilers: a
    /// MainActor stall on a worker that never ran the probe's work is then sampled while it runs.
    /// Otherwise as ``install(signal:)``. Returns the signal in use.
    static func installForDispatchWorkers(signal: Int32?) throws(StallMonitorError) -> Int32 {
        if signal == nil, CStallMonitor_sampler_signal() == 0, CStallMonitor_signal_is_free(SIGPROF) != 0,
            let profiling = try? install(signal: SIGPROF)
        {
            return profiling
        }
        return try install(signal: signal)
    }

    /// Drops one installation; the last restores the previous signal disposition.
    static func uninstall() {
        CStallMonitor_sampler_uninstall()
    }

    /// Loads libunwind when `mode` needs it in the signal handler: always for
    /// `.libunwindInHandler`, and for `.snapshot` only when no snapshot unwinder can be loaded
    /// (libunwind is then the fallback for running threads). Otherwise nothing is loaded: the
    /// snapshot unwinder is mapped at the first stall, on the watchdog, so an idle monitor stays
    /// small. Call before the monitored threads arm (arming takes the warm-up sample that makes
    /// libunwind safe in the handler).
    static func prepareHandlerUnwinder(for mode: StallMonitor.Unwinding, symbolicateInProcess: Bool) {
        if mode == .snapshot {
            // `preferred` is libunwind's remote unwinder only where it loads.
            let preferred = SnapshotUnwinder.Backend.preferred(symbolicateInProcess: symbolicateInProcess)
            if preferred != .libdw || SnapshotUnwinder.Backend.libdw.loadable().loads { return }
        }
        _ = CStallMonitor_sampler_load_unwinder()
    }

    /// Whether libunwind is loaded, and why not.
    static func unwinderStatus() -> (available: Bool, note: String?) {
        var note = [CChar](repeating: 0, count: 256)
        let available = CStallMonitor_sampler_unwinder_available(&note, note.count) != 0
        return (available, available ? nil : CString.decode(note))
    }

    /// Runs `body` as the only sampling request of the process (every watchdog's requests go
    /// through the one signal slot).
    static func withRequestLock<T>(_ body: () -> T) -> T {
        requestLock.withLock { _ in body() }
    }

    /// The outcome of a request that did not answer with a stack.
    static func outcome(_ result: CStallMonitorSampleResult) -> Outcome {
        switch result {
        case CStallMonitorSampleTimedOut: return .timedOut
        case CStallMonitorSampleBusy: return .busy
        case CStallMonitorSampleSendFailed: return .sendFailed
        case CStallMonitorSampleHandlerReplaced: return .handlerReplaced
        default: return .unavailable
        }
    }

    /// Asks thread `tid` to unwind itself with libunwind in its signal handler, waiting at most
    /// `timeout` nanoseconds.
    static func sample(tid: Int32, timeout: UInt64, maxFrames: Int, into buffer: inout [UInt]) -> Outcome {
        withRequestLock {
            var count: Int32 = 0
            var truncated: Int32 = 0
            let capacity = min(maxFrames, buffer.count)
            let result = buffer.withUnsafeMutableBufferPointer { frames in
                CStallMonitor_sampler_sample(tid, timeout, frames.baseAddress, Int32(capacity), &count, &truncated)
            }
            guard result == CStallMonitorSampleOK else { return outcome(result) }
            return .stack(Array(buffer[0..<Int(count)]), truncated: truncated != 0)
        }
    }
}
