import Foundation

/// A value behind an `NSLock` (pthread mutex: ThreadSanitizer sees its order, unlike `Mutex`'s futex).
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
