import Foundation
import Synchronization
import Testing

@testable import StallMonitor

/// Unwinds a loop thread while it sleeps in a blocking call, with each snapshot unwinder in turn,
/// as the watchdog would (its `/proc` syscall file, a copy of its frozen stack, no signal).
enum AsleepThreadUnwinding {
    /// What each backend made of the same sleeping thread.
    struct Walks {
        var outcomes: [SnapshotUnwinder.Backend: SnapshotUnwinder.Outcome] = [:]
        var call: BlockingCalls.Outcome

        /// The frames and completeness of `backend`'s walk; nil when it gave no stack.
        func stack(_ backend: SnapshotUnwinder.Backend) -> (frames: [UInt], complete: Bool)? {
            guard case .stack(let frames, let complete)? = outcomes[backend] else { return nil }
            return (frames, complete)
        }
    }

    /// Runs `kind`'s call for `milliseconds` on `loop` and, once the thread sleeps in it, unwinds
    /// it with `backends` in order (`between` runs before each). Returns after the call returned.
    static func unwind(
        _ kind: BlockingCalls.Kind, on loop: MonitoredLoopThread, milliseconds: Int = 700,
        backends: [SnapshotUnwinder.Backend],
        between: (SnapshotUnwinder.Backend) -> Void = { _ in }
    ) throws -> Walks {
        let started = Atomic<Bool>(false)
        let call = kind.call
        let pending = loop.perform { () -> BlockingCalls.Outcome in
            started.store(true, ordering: .releasing)
            return call(milliseconds)
        }
        #expect(waitUntil(timeout: .seconds(5)) { started.load(ordering: .acquiring) })
        let files = ThreadProcFiles(tid: loop.tid)
        let asleep = waitUntil(timeout: .seconds(2)) {
            if case .inSyscall = files.syscallState() { return true }
            return false
        }
        #expect(asleep, "\(kind.function) never slept")
        var outcomes: [SnapshotUnwinder.Backend: SnapshotUnwinder.Outcome] = [:]
        let state = files.syscallState()
        if asleep, case .inSyscall(_, let sp, let pc) = state {
            let (low, high) = try #require(Kernel.writableMapping(containing: sp))
            for backend in backends {
                between(backend)
                outcomes[backend] = MonitorProcess.shared.unwinder.unwindBlocked(
                    tid: loop.tid, sp: sp, pc: pc, bounds: .init(low: low, high: high), copyBytes: 256 * 1024,
                    maxFrames: 256, backend: backend, stillAsleep: { files.syscallState() == state })
            }
        }
        let outcome = try pending.wait(timeout: .seconds(10), what: kind.function)
        return Walks(outcomes: outcomes, call: outcome)
    }
}
