import CStallMonitor
import Glibc
import StallReportModel

/// Unwinds stacks away from the sampled thread, on the watchdog: snapshots (registers and a copy
/// of the stack bytes) taken by the signal handler of a thread running on a CPU, and snapshots of
/// a thread asleep in the kernel taken here from its `/proc` syscall file and its frozen stack,
/// without signalling it. A DWARF CFI unwinder walks the copy: libdw, or libunwind's remote API
/// (x86_64), which reads unwind tables from the files with pread and maps nothing, for monitors
/// that do not symbolicate in process (libdw is loaded for names anyway when they do). The library
/// is loaded at the first unwind. One session per backend and process, serialized; their files and
/// caches are released when the last monitor stops or after a quiet period.
final class SnapshotUnwinder: Sendable {
    /// A backend that walks snapshots.
    enum Backend: Int32, Sendable, CaseIterable {
        case libdw = 0
        case libunwindRemote = 1

        /// As samples name their unwinder.
        var name: UnwinderName { self == .libdw ? .libdw : .libunwindRemote }

        /// The backend for a monitor: libunwind's remote unwinder where it loads when names come
        /// later (it maps no file; libdw maps each module's ELF file), libdw otherwise.
        static func preferred(symbolicateInProcess: Bool) -> Backend {
            guard !symbolicateInProcess else { return .libdw }
            return libunwindRemoteLoads ? .libunwindRemote : .libdw
        }

        /// Whether the backend's library loads on this machine and architecture, and why not
        /// (without keeping it loaded).
        func loadable() -> (loads: Bool, note: String?) {
            var note = [CChar](repeating: 0, count: 256)
            let loads =
                self == .libdw
                ? CStallMonitor_libdw_loadable(&note, note.count) != 0
                : CStallMonitor_libunwind_remote_loadable(&note, note.count) != 0
            return (loads, loads ? nil : CString.decode(note))
        }

        private static let libunwindRemoteLoads = Backend.libunwindRemote.loadable().loads
    }

    /// Where a snapshot's stack lies and how much of it to copy.
    struct StackBounds: Sendable, Equatable {
        var low: UInt
        var high: UInt
    }

    /// The result of one unwind.
    enum Outcome {
        /// PCs, leaf first; `complete` when the walk reached the thread's outermost frame.
        case stack([UInt], complete: Bool)
        /// The thread ran while its stack was being copied: the copy may mix two moments.
        case threadMoved
        /// The handler did not answer, or was busy, or could not be signalled.
        case signal(StackSampler.Outcome)
        /// No usable snapshot or unwinder; the reason.
        case failed(String)
    }

    /// One backend's session.
    private struct Slot {
        var session: OpaquePointer?
        var opened = false
        var openedAt: UInt64 = 0
        /// The loader's count of objects loaded when the session opened, where the opener read it
        /// (the blocking-call collector does; the watchdog never does: `dl_iterate_phdr` takes the
        /// loader's lock, which a stalled host may hold). nil: unknown.
        var imagesAdded: UInt64?
        var note: String?
    }

    private struct State: @unchecked Sendable {
        var slots = [Slot](repeating: Slot(), count: Backend.allCases.count)
        var users = 0
        /// When the session was last used (monotonic ns; 0: not since it was released).
        var lastUse: UInt64 = 0
        /// The stack copy and frame buffers (allocated once, reused).
        var stack: UnsafeMutableRawPointer?
        var frames = [UInt](repeating: 0, count: Int(CSTALLMONITOR_MAX_FRAMES))

        /// Whether a session is open or the stack copy allocated (something to release).
        var holdsAnything: Bool { slots.contains(where: \.opened) || stack != nil }
    }

    /// A session that met code outside the mappings it knew is reopened at most this often, or at
    /// once for a caller that knows a library was loaded since it opened.
    private static let reopenInterval: UInt64 = 1_000_000_000

    private let state = Locked(State())
    /// Told of each use (``CacheUse``), so a quiet period's release is waited for only after one.
    private let cacheUse: CacheUse

    init(cacheUse: CacheUse = CacheUse()) { self.cacheUse = cacheUse }

    /// Whether `backend` can be used, and why not. Opens its session (loads its library) when not
    /// yet open. Asked once per stall: a session that failed to open (its library or a module
    /// list could not be read for want of a descriptor or memory) is tried again here, so a
    /// transient failure costs one stall its stacks, not the monitor's life.
    func availability(_ backend: Backend) -> (available: Bool, note: String?) {
        state.withLock { state in
            cacheUse.noteUse(&state.lastUse)
            let index = Int(backend.rawValue)
            if state.slots[index].opened, state.slots[index].session == nil { state.slots[index] = Slot() }
            open(&state, backend)
            return (state.slots[Int(backend.rawValue)].session != nil, state.slots[Int(backend.rawValue)].note)
        }
    }

    /// Counts a monitor that starts using the unwinder.
    func retain() {
        state.withLock { $0.users += 1 }
    }

    /// Counts a monitor that stopped; the last one closes the session (files, caches, buffer).
    func release() {
        state.withLock { state in
            state.users = max(0, state.users - 1)
            guard state.users == 0 else { return }
            closeAll(&state)
        }
    }

    /// Closes the session and frees the stack copy when both were last used before `cutoff`
    /// (monotonic ns). Returns whether anything was released.
    func releaseIfUnused(since cutoff: UInt64) -> Bool {
        state.withLock { state in
            guard state.lastUse != 0, state.lastUse <= cutoff else { return false }
            state.lastUse = 0
            guard state.holdsAnything else { return false }
            closeAll(&state)
            return true
        }
    }

    /// Closes the session and frees the stack copy when no monitor holds the unwinder (a
    /// blocking-call detector used it alone, for its stack copies) and it was last used at or
    /// before `cutoff` (monotonic ns). Returns whether anything was released.
    func releaseUnlessRetained(unusedSince cutoff: UInt64 = .max) -> Bool {
        state.withLock { state in
            guard state.users == 0, state.lastUse <= cutoff,
                state.holdsAnything
            else { return false }
            closeAll(&state)
            return true
        }
    }

    /// Whether a monitor holds the unwinder now (for tests and diagnostics).
    var isRetained: Bool {
        state.withLock { $0.users > 0 }
    }

    /// Whether a stack was unwound since the last release (something may be released then).
    var usedSinceRelease: Bool { state.withLock { $0.lastUse != 0 } }

    /// Whether any session is open now (for tests and diagnostics).
    var isOpen: Bool {
        state.withLock { $0.slots.contains { $0.session != nil } }
    }

    /// Signals running thread `tid` for a snapshot and unwinds it with `backend`.
    func unwindRunning(
        tid: Int32, bounds: StackBounds, copyBytes: Int, timeout: UInt64, maxFrames: Int,
        backend: Backend
    ) -> Outcome {
        state.withLock { state in
            guard let session = ensureSession(&state, backend) else { return unavailable(state, backend) }
            var snapshot = makeSnapshot(&state, bounds: bounds, copyBytes: copyBytes)
            let result = StackSampler.withRequestLock {
                CStallMonitor_sampler_snapshot(tid, timeout, &snapshot)
            }
            guard result == CStallMonitorSampleOK else { return .signal(StackSampler.outcome(result)) }
            return unwind(&state, backend, session: session, tid: tid, snapshot: &snapshot, maxFrames: maxFrames)
        }
    }

    /// The stack pointer of thread `tid` (running on a CPU), from a snapshot that copies its
    /// registers only: how the stack of a thread that never armed itself is found (the mapping
    /// holding that address). nil when the signal is not answered.
    func stackPointer(tid: Int32, timeout: UInt64) -> UInt? {
        var byte: UInt8 = 0
        return withUnsafeMutablePointer(to: &byte) { buffer in
            var snapshot = CStallMonitorSnapshot()
            snapshot.stack = buffer
            snapshot.stack_capacity = 0  // with no bounds the handler copies no stack bytes
            let result = StackSampler.withRequestLock { CStallMonitor_sampler_snapshot(tid, timeout, &snapshot) }
            return result == CStallMonitorSampleOK && snapshot.sp != 0 ? snapshot.sp : nil
        }
    }

    /// Takes the stack of thread `tid`, asleep in the kernel with user stack pointer `sp` and
    /// program counter `pc`, without touching it; `stillAsleep` is asked after the copy and must
    /// confirm that the thread has not run since `sp` and `pc` were read. Unwound with `backend`.
    func unwindBlocked(
        tid: Int32, sp: UInt, pc: UInt, bounds: StackBounds, copyBytes: Int, maxFrames: Int,
        backend: Backend, stillAsleep: () -> Bool
    ) -> Outcome {
        state.withLock { state in
            guard let session = ensureSession(&state, backend) else { return unavailable(state, backend) }
            var snapshot = makeSnapshot(&state, bounds: bounds, copyBytes: copyBytes)
            let copied = CStallMonitor_snapshot_blocked(sp, pc, &snapshot)
            guard copied == 0 else {
                return .failed(
                    copied == -ERANGE
                        ? "the stack pointer lies outside the thread's stack"
                        : "its stack could not be read (errno \(-copied))")
            }
            guard stillAsleep() else { return .threadMoved }
            return unwind(&state, backend, session: session, tid: tid, snapshot: &snapshot, maxFrames: maxFrames)
        }
    }

    /// Walks the stack copy a blocking-call record holds (taken on the calling thread where its
    /// frame-pointer walk stopped short) with libdw's CFI unwinder, from the caller's return
    /// address. The copy stays the record's.
    func unwindStackCopy(of record: CStallMonitorBlockingRecord, maxFrames: Int) -> Outcome {
        var snapshot = CStallMonitorSnapshot()
        guard withUnsafePointer(to: record, { CStallMonitor_blocking_stack_copy_snapshot($0, &snapshot) }) == 0 else {
            return .failed("the record holds no stack copy")
        }
        // Read here, on the collector's thread: never on the watchdog (see `Slot.imagesAdded`).
        let imagesAdded = UInt64(CStallMonitor_images_added())
        return state.withLock { state in
            let index = Int(Backend.libdw.rawValue)
            let wasOpen = state.slots[index].opened
            guard let session = ensureSession(&state, .libdw) else { return unavailable(state, .libdw) }
            if !wasOpen { state.slots[index].imagesAdded = imagesAdded }
            return unwind(
                &state, .libdw, session: session, tid: record.thread_id, snapshot: &snapshot, maxFrames: maxFrames,
                imagesAdded: imagesAdded)
        }
    }

    private func unavailable(_ state: State, _ backend: Backend) -> Outcome {
        .failed(state.slots[Int(backend.rawValue)].note ?? "\(backend.name) unavailable")
    }

    private func makeSnapshot(_ state: inout State, bounds: StackBounds, copyBytes: Int) -> CStallMonitorSnapshot {
        let capacity = Int(CSTALLMONITOR_MAX_STACK_COPY)
        if state.stack == nil {
            state.stack = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        }
        var snapshot = CStallMonitorSnapshot()
        snapshot.stack = state.stack!.assumingMemoryBound(to: UInt8.self)
        snapshot.stack_capacity = min(max(copyBytes, 4096), capacity)
        snapshot.stack_low = bounds.low
        snapshot.stack_high = bounds.high
        return snapshot
    }

    /// Unwinds `snapshot`; a session that meets code it does not know is reopened once when it is
    /// old enough, or when `imagesAdded` (the loader's count now, where the caller read it) is not
    /// the count it opened with.
    private func unwind(
        _ state: inout State, _ backend: Backend, session: OpaquePointer, tid: Int32,
        snapshot: inout CStallMonitorSnapshot, maxFrames: Int, imagesAdded: UInt64? = nil
    ) -> Outcome {
        var session = session
        let capacity = min(maxFrames, state.frames.count)
        for attempt in 0..<2 {
            var count: Int32 = 0
            var complete: Int32 = 0
            let outcome = state.frames.withUnsafeMutableBufferPointer { frames in
                CStallMonitor_unwinder_unwind(
                    session, tid, &snapshot, frames.baseAddress, Int32(capacity), &count, &complete)
            }
            let slot = state.slots[Int(backend.rawValue)]
            if outcome == Int32(CStallMonitorUnwindUnknownCode), attempt == 0,
                (imagesAdded != nil && imagesAdded != slot.imagesAdded)
                    || CStallMonitor_monotonic_ns() &- slot.openedAt >= Self.reopenInterval
            {
                // A library loaded after the session opened: read the mappings again.
                close(&state, backend)
                guard let reopened = ensureSession(&state, backend) else { break }
                state.slots[Int(backend.rawValue)].imagesAdded = imagesAdded
                session = reopened
                continue
            }
            guard count > 0 else { return .failed("\(backend.name) found no frame at the program counter") }
            return .stack(Array(state.frames[0..<Int(count)]), complete: complete != 0)
        }
        return unavailable(state, backend)
    }

    private func ensureSession(_ state: inout State, _ backend: Backend) -> OpaquePointer? {
        cacheUse.noteUse(&state.lastUse)
        open(&state, backend)
        return state.slots[Int(backend.rawValue)].session
    }

    private func open(_ state: inout State, _ backend: Backend) {
        let index = Int(backend.rawValue)
        guard !state.slots[index].opened else { return }
        var error = [CChar](repeating: 0, count: 256)
        let session = CStallMonitor_unwinder_open(backend.rawValue, &error, error.count)
        state.slots[index] = Slot(
            session: session, opened: true, openedAt: CStallMonitor_monotonic_ns(),
            note: session == nil ? CString.decode(error) : nil)
    }

    private func close(_ state: inout State, _ backend: Backend) {
        let index = Int(backend.rawValue)
        if let session = state.slots[index].session { CStallMonitor_unwinder_close(session) }
        state.slots[index] = Slot()
    }

    /// Closes every backend's session and frees the stack copy.
    private func closeAll(_ state: inout State) {
        state.lastUse = 0  // nothing held: no quiet period to wait for until the next use
        for backend in Backend.allCases { close(&state, backend) }
        state.stack?.deallocate()
        state.stack = nil
    }
}
