import CStallMonitor
import Dispatch
import Glibc
import Synchronization

/// What reading async callers costs the watchdog, against the stack unwinding each one
/// accompanies (for `stall-bench`): a task on the pool, five async calls deep, sleeps in `read`
/// on a pipe while its stack is unwound from a copy (as for any blocked stall sample) and its
/// async call chain is read, `rounds` times each.
package enum AsyncChainCost {
    /// Median nanoseconds of one stack and one chain, and what they found.
    package struct Result: Sendable {
        package var unwindNanoseconds: Double
        package var chainNanoseconds: Double
        package var frames: Int
        package var callers: Int
        /// Why nothing was measured, when nothing was.
        package var problem: String?
    }

    /// Measures `rounds` stacks and chains of a blocked pool task.
    package static func measure(rounds: Int) -> Result {
        var failed = Result(unwindNanoseconds: 0, chainNanoseconds: 0, frames: 0, callers: 0)
        #if os(Linux) && arch(x86_64)
        guard case .success(let pool) = PoolLayout.learn(),
            case .success(let layout) = AsyncTaskLayout.verify(activeTaskOffset: pool.activeTaskOffset)
        else {
            failed.problem = "the runtime's task layout is not known here"
            return failed
        }
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            failed.problem = "no pipe"
            return failed
        }
        defer {
            close(ends[0])
            close(ends[1])
        }
        let blocked = Locked<(tid: Int32, pointer: UInt)?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let readEnd = ends[0]
        let task = Task.detached {
            await costLevel1 {
                blocked.withLock { $0 = (CStallMonitor_gettid(), CStallMonitor_thread_pointer()) }
                ready.signal()
                var byte: UInt8 = 0
                _ = read(readEnd, &byte, 1)
            }
        }
        ready.wait()
        defer {
            var byte: UInt8 = 1
            _ = write(ends[1], &byte, 1)
            _ = task
        }
        guard let (tid, pointer) = blocked.withLock({ $0 }) else { return failed }
        let files = ThreadProcFiles(tid: tid)
        guard case .inSyscall(_, let sp, let pc) = waitUntilBlocked(files) else {
            failed.problem = "the task did not block"
            return failed
        }
        var low: UInt = 0
        var high: UInt = 0
        guard CStallMonitor_mapping_containing(sp, &low, &high) == 0 else { return failed }
        let bounds = SnapshotUnwinder.StackBounds(low: low, high: high)
        MonitorProcess.shared.unwinder.retain()
        defer { MonitorProcess.shared.unwinder.release() }
        let reader = AsyncCallChainReader(layout: layout, threads: pool)
        var unwinds: [UInt64] = []
        var chains: [UInt64] = []
        var frames = 0
        var callers = 0
        for _ in 0..<max(rounds, 1) {
            let began = CStallMonitor_monotonic_ns()
            let outcome = MonitorProcess.shared.unwinder.unwindBlocked(
                tid: tid, sp: sp, pc: pc, bounds: bounds, copyBytes: 256 * 1024, maxFrames: 128, backend: .libdw,
                stillAsleep: { true })
            let unwound = CStallMonitor_monotonic_ns()
            guard case .stack(let stack, _) = outcome else {
                failed.problem = "the stack was not unwound"
                return failed
            }
            let chain = reader.read(threadPointer: pointer, stack: bounds, physical: stack, now: unwound)
            let read = CStallMonitor_monotonic_ns()
            guard case .chain(let found) = chain else {
                failed.problem = "no chain: \(chain)"
                return failed
            }
            unwinds.append(unwound - began)
            chains.append(read - unwound)
            frames = stack.count
            callers = found.callers.count
        }
        func median(_ values: [UInt64]) -> Double { Double(values.sorted()[values.count / 2]) }
        return Result(
            unwindNanoseconds: median(unwinds), chainNanoseconds: median(chains), frames: frames, callers: callers)
        #else
        failed.problem = "async callers are read on x86_64 Linux only"
        return failed
        #endif
    }

    /// The syscall state of the thread of `files` once it sleeps in a syscall (looked at every
    /// millisecond for up to 200 ms; the last state read if it never does).
    private static func waitUntilBlocked(_ files: ThreadProcFiles) -> ThreadProcFiles.SyscallState {
        var state = files.syscallState()
        var looks = 0
        while looks < 200, !state.isInSyscall {
            usleep(1_000)
            state = files.syscallState()
            looks += 1
        }
        return state
    }
}

extension ThreadProcFiles.SyscallState {
    fileprivate var isInSyscall: Bool {
        if case .inSyscall = self { return true }
        return false
    }
}

@inline(never) private func costLevel1(_ body: @Sendable () -> Void) async { await costLevel2(body) }
@inline(never) private func costLevel2(_ body: @Sendable () -> Void) async { await costLevel3(body) }
@inline(never) private func costLevel3(_ body: @Sendable () -> Void) async { await costLevel4(body) }
@inline(never) private func costLevel4(_ body: @Sendable () -> Void) async { await costLevel5(body) }
@inline(never) private func costLevel5(_ body: @Sendable () -> Void) async { body() }
