import CStallMonitor
import CoreFoundation
import Synchronization

/// A thread whose loop the watchdog watches: its span tracker, its kernel thread id (known once
/// the thread has armed itself) and the run loop, to read the current mode during a stall.
final class MonitoredThread: @unchecked Sendable {
    /// Facts about the thread copied into reports.
    struct Identity: Sendable {
        var tid: Int32
        var name: String
        var isMainThread: Bool
        var loopKind: String
    }

    let tracker: SpanTracker
    /// 0 until the thread has armed itself (tid known, signal stack ensured, unwinder warmed up).
    let armedTID = Atomic<Int32>(0)
    /// The run loop (CF objects are thread-safe for reading the current mode).
    let runLoop: CFRunLoop
    /// The thread's stack, `[low, high)`, read on the thread when it arms (published before
    /// ``armedTID``); 0 when unknown. Snapshots never copy past `high`.
    private let stackLow = Atomic<UInt>(0)
    private let stackHigh = Atomic<UInt>(0)

    /// The thread's stack bounds, once armed and when known.
    var stackBounds: SnapshotUnwinder.StackBounds? {
        let high = stackHigh.load(ordering: .acquiring)
        guard high != 0 else { return nil }
        return .init(low: stackLow.load(ordering: .acquiring), high: high)
    }

    init(tracker: SpanTracker, runLoop: CFRunLoop) {
        self.tracker = tracker
        self.runLoop = runLoop
    }

    /// Runs on the monitored thread: records its id, unblocks the sampling signal (threads
    /// inherit signal masks: a process spawned from a libdispatch worker starts with every signal
    /// blocked), notes its stack bounds, makes sure it has a large enough alternate signal stack, and takes one sample of
    /// itself so that libunwind's first-use allocations (per-thread caches) happen here and not
    /// inside a later signal handler. A thread that blocks the signal later is still detected:
    /// its samples say so.
    func arm(signal: Int32, sampleTimeout: UInt64, maxFrames: Int) {
        let tid = CStallMonitor_gettid()
        var low: UInt = 0
        var high: UInt = 0
        if CStallMonitor_current_stack_bounds(&low, &high) == 0 {
            stackLow.store(low, ordering: .releasing)
            stackHigh.store(high, ordering: .releasing)
        }
        _ = CStallMonitor_unblock_signal(signal)
        _ = CStallMonitor_ensure_altstack(64 * 1024)
        var buffer = [UInt](repeating: 0, count: maxFrames)
        _ = StackSampler.sample(tid: tid, timeout: sampleTimeout, maxFrames: maxFrames, into: &buffer)
        armedTID.store(tid, ordering: .releasing)
    }

    /// The run loop's current mode, when it is running.
    func currentMode() -> String? {
        guard let mode = CFRunLoopCopyCurrentMode(runLoop) else { return nil }
        let length = CFStringGetLength(mode)
        let capacity = CFStringGetMaximumSizeForEncoding(length, CFStringBuiltInEncodings.UTF8.rawValue) + 1
        var buffer = [CChar](repeating: 0, count: Int(capacity))
        guard CFStringGetCString(mode, &buffer, capacity, CFStringBuiltInEncodings.UTF8.rawValue) else { return nil }
        return CString.decode(buffer)
    }
}
