import Foundation
import Glibc

/// The threads of this process, from `/proc/self/task`.
enum ProcessThreads {
    /// How many threads the process has now (0 when `/proc` cannot be read).
    static var count: Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
    }

    /// Waits until the calling thread is the process's only one, at most `timeout`; whether it is.
    static func waitUntilAlone(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while count != 1 {
            guard ContinuousClock.now < deadline else { return false }
            usleep(1_000)
        }
        return true
    }
}
