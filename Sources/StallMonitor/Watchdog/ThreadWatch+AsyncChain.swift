import CStallMonitor
import Glibc

/// Where a monitor's watches get async callers from.
enum AsyncChainSource {
    /// Read with this reader.
    case reader(AsyncCallChainReader)
    /// Not read, for this reason (said in the reports of loops that run tasks).
    case unavailable(String)
}

extension AsyncChainSource {
    /// The source for a monitor that learned the runtime's active-task offset (or why not).
    static func make(_ pool: Result<PoolLayout, StallMonitorError>) -> AsyncChainSource {
        switch pool {
        case .failure(let error):
            return .unavailable("the runtime's active-task word is not known (\(error.reason))")
        case .success(let threads):
            switch AsyncTaskLayout.verify(activeTaskOffset: threads.activeTaskOffset) {
            case .success(let layout): return .reader(AsyncCallChainReader(layout: layout, threads: threads))
            case .failure(let omission): return .unavailable(omission.reason)
            }
        }
    }
}

extension ThreadWatch {
    /// The async callers of the task thread `tid` runs, read right after its stack `physical`;
    /// nil when it runs none or they cannot be read (the reason is counted in `recording`).
    func asyncChain(tid: Int32, physical: [UInt], recording: inout StallRecording) -> AsyncCallChain? {
        switch asyncChains {
        case nil:
            return nil
        case .unavailable(let why):
            if thread.probe.runsTasks { recording.asyncChainOmissions[why, default: 0] += 1 }
            return nil
        case .reader(let reader):
            let now = CStallMonitor_monotonic_ns()
            guard let pointer = thread.threadPointer(of: tid) ?? reader.threadPointer(of: tid, now: now) else {
                if thread.probe.runsTasks {
                    recording.asyncChainOmissions["the thread's thread pointer is not known", default: 0] += 1
                }
                return nil
            }
            switch reader.read(threadPointer: pointer, stack: thread.stackBounds(of: tid), physical: physical, now: now)
            {
            case .notInTask:
                return nil
            case .chain(let chain):
                return chain
            case .omitted(let omission):
                recording.asyncChainOmissions[omission.reason, default: 0] += 1
                return nil
            }
        }
    }
}
