import CStallMonitor
import Glibc

/// Whether the main thread can run the main run loop at all, read from `/proc` without touching it.
enum MainThreadState {
    /// Why the main run loop will never run, when that is certain: the main thread has exited or
    /// is parked in `rt_sigsuspend`, as `async main` and `dispatchMain()` leave it (libdispatch
    /// then drains the main queue on its worker threads). nil when called on the main thread or
    /// when the main thread may still run its loop.
    static func whyNoMainRunLoop() -> String? {
        let main = getpid()
        guard CStallMonitor_gettid() != main else { return nil }
        let files = ThreadProcFiles(tid: main)
        let parkedIn = SyscallTable.numbers(["rt_sigsuspend"])
        let parked: Bool
        switch files.syscallState() {
        case .inSyscall(let number, _, _): parked = parkedIn.contains(number)
        default: parked = false
        }
        let state = files.schedulerState()
        guard parked || state == "Z" || state == "X" else { return nil }
        return "the main thread never runs RunLoop.main here (it is \(parked ? "parked in sigsuspend" : "gone"), "
            + "as in a program with `async main` or `dispatchMain()`, whose main queue and MainActor run on Dispatch "
            + "worker threads): nothing would be watched. Watch its MainActor with `loop: .mainActor`, or another loop this "
            + "program runs (see the README's \"Which loop does my program run?\")."
    }
}
