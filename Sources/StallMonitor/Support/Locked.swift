import CStallMonitor
import Synchronization

/// State behind a `Mutex`, with critical sections ThreadSanitizer can see. On Linux the Mutex
/// locks with futex calls from the standard library, which is not built with TSan, so TSan would
/// see no order between two critical sections and report the state as raced; each section here
/// also acquires and releases a TSan happens-before edge on this object (no-ops without TSan).
package final class Locked<Value>: Sendable {
    private let mutex: Mutex<Value>

    package init(_ value: sending Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` with the state, locked.
    package func withLock<Result>(_ body: (inout sending Value) throws -> sending Result) rethrows -> sending Result {
        try mutex.withLock { value in
            let address = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
            CStallMonitor_tsan_acquire(address)
            defer { CStallMonitor_tsan_release(address) }
            return try body(&value)
        }
    }
}
