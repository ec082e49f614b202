import CStallMonitor
import Dispatch
import Glibc
import Synchronization

/// The Dispatch main queue's drain owner, read from libdispatch's own queue object without a hook.
///
/// libdispatch keeps a serial queue's state in one 64-bit word, `dq_state`, updated atomically;
/// while a thread drains the queue, the word's low bits (`DISPATCH_QUEUE_DRAIN_OWNER_MASK`, the
/// `dispatch_lock` of the owner) hold that thread's kernel id (`_dispatch_tid_self()` is `gettid`
/// on Linux), and 0 while nobody drains it. The main queue is the exported static object
/// `_dispatch_main_q`; `dq_state` follows the object header, at byte 56 on 64-bit Linux
/// (swift-corelibs-libdispatch `queue_internal.h`, `object_internal.h`). Both facts are checked
/// when a monitor starts (``verify()``): a block on the main queue must read its own thread id
/// there. So reading the owner costs one load, and tells which worker runs MainActor work now.
struct MainQueueState: @unchecked Sendable {
    /// Byte offset of `dq_state` in `struct dispatch_queue_s` (64-bit Linux).
    static let stateOffset = 56
    /// `DLOCK_OWNER_MASK`: the owner's thread id in a `dispatch_lock`.
    static let ownerMask: UInt64 = 0x3fff_ffff

    private let state: UnsafeRawPointer
    /// The main queue object (`_dispatch_main_q`).
    var address: UnsafeRawPointer { state - Self.stateOffset }

    /// The main queue of this process, when libdispatch exports it and this toolchain's layout is
    /// known; otherwise why not.
    static func locate() -> Result<MainQueueState, StallMonitorError> {
        #if compiler(>=6.3) && !compiler(>=6.4) && (arch(x86_64) || arch(arm64))
        guard let queue = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "_dispatch_main_q") else {
            return .failure(
                .unsupportedLoop(
                    "libdispatch does not export its main queue (_dispatch_main_q): the MainActor cannot be watched"))
        }
        return .success(MainQueueState(state: UnsafeRawPointer(queue) + stateOffset))
        #else
        return .failure(
            .unsupportedLoop(
                "watching the MainActor reads libdispatch's main queue state, whose layout this StallMonitor knows for "
                    + "Swift 6.3 on 64-bit Linux only: this build's compiler is not that one"))
        #endif
    }

    private init(state: UnsafeRawPointer) {
        self.state = state
    }

    /// The kernel id of the thread draining the main queue now; 0 while nobody does.
    @inline(__always)
    func owner() -> Int32 {
        Int32(truncatingIfNeeded: CStallMonitor_load_u64(state) & Self.ownerMask)
    }

    /// Checks the layout: on the main queue, the owner read must be the calling thread. Called on
    /// the main queue already (MainActor code) it checks at once; otherwise it runs a block there
    /// and waits for it at most `timeout`, and refuses when the main thread runs it (a RunLoop.main
    /// program: `loop: .main` watches that). Never waits on the main thread (a RunLoop.main
    /// program drains the main queue there: waiting would deadlock it).
    func verify(timeout: Duration = .seconds(2)) -> StallMonitorError? {
        let me = CStallMonitor_gettid()
        if owner() == me { return nil }
        if me == getpid() {
            return .unsupportedLoop(
                "start(loop: .mainActor) was called on the main thread outside the main queue's work: a program whose "
                    + "main thread runs RunLoop.main drains the main queue there (watch it with `loop: .main`); "
                    + "in an `async main` program call it from MainActor code or another thread")
        }
        let seen = Atomic<Int64>(-1)
        let done = DispatchSemaphore(value: 0)
        let state = self
        DispatchQueue.main.async {
            let tid = CStallMonitor_gettid()
            // 2: run by the main thread, which a RunLoop.main program binds the main queue to.
            seen.store(tid == getpid() ? 2 : Int64(state.owner() == tid ? 1 : 0), ordering: .releasing)
            done.signal()
        }
        guard done.wait(timeout: .now() + .nanoseconds(Int(timeout.nanoseconds))) == .success else {
            return .loopNotRunning(
                "the Dispatch main queue did not run a block within \(timeout) of start(loop: .mainActor): nothing drains it "
                    + "(or it is stuck), so the MainActor cannot be watched")
        }
        if seen.load(ordering: .acquiring) == 2 {
            return .unsupportedLoop(
                "the main queue runs on the main thread here (a program that runs RunLoop.main): its MainActor "
                    + "work runs in the main run loop, which `loop: .main` watches")
        }
        guard seen.load(ordering: .acquiring) == 1 else {
            return .unsupportedLoop(
                "libdispatch's main queue state is not laid out as this StallMonitor expects (drain owner at byte "
                    + "\(Self.stateOffset) of _dispatch_main_q): the MainActor cannot be watched with this libdispatch")
        }
        return nil
    }
}
