import Foundation
import Glibc

/// A thread that only waits, for a baseline run without StallMonitor: a monitor's process has
/// threads of its own, and from the second thread on the C library takes its multi-threaded paths
/// (a cancellable syscall such as CoreFoundation's `ppoll` marks itself cancellable around the
/// call, a mutex unlock checks for waiters), which are not the monitor's cost. With this thread the
/// baseline takes them too.
final class ParkedThread: @unchecked Sendable {
    private let wake = DispatchSemaphore(value: 0)
    private let ended = DispatchSemaphore(value: 0)

    /// Starts the thread; it waits until ``stop()``.
    init() {
        let thread = Thread { [wake, ended] in
            wake.wait()
            ended.signal()
        }
        thread.start()
    }

    /// Wakes the thread and waits for it to end.
    func stop() {
        wake.signal()
        ended.wait()
    }
}
