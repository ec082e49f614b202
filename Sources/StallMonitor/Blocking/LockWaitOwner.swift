import StallReportModel

/// Whose lock a lock wait waited for: the module of the innermost frame of its stack that is not
/// the lock's own machinery (SwiftNIO's `NIOLock` and `NIOLockedValueBox`, the standard library's
/// buffers, `Synchronization.Mutex`), read from the frame's demangled name.
///
/// A library's own short critical sections (SwiftNIO's event loop and async writer locks, the
/// Swift runtime's task status lock) are waited for only when their holder was preempted: such a
/// wait is the library's by design, not the app's blocking call, and a loaded machine makes many.
/// Waits on locks the app takes itself (its own `NIOLock`, `Mutex` or `NSLock`) are recorded.
enum LockWaitOwner {
    /// The calls that wait for a lock to be released.
    static let lockCalls: Set<String> = [
        "pthread_mutex_lock", "pthread_rwlock_rdlock", "pthread_rwlock_wrlock", "futex",
    ]

    /// Modules whose frames are a lock's machinery, whoever takes the lock.
    static let machinery: Set<String> = ["NIOConcurrencyHelpers", "Swift", "Synchronization"]

    /// Whether a wait made by `call` from `frames` (leaf first, demangled names) is on a lock one
    /// of `owners` took (a module name prefix: `NIO` covers `NIOCore` and `NIOPosix`; `swift::`
    /// is the Swift runtime's C++).
    static func isAllowed(call: String, frames: [String?], owners: [String]) -> Bool {
        guard !owners.isEmpty, lockCalls.contains(call) else { return false }
        for case let name? in frames {
            guard let module = module(of: name) else { continue }  // compiler-made glue
            if machinery.contains(module) { continue }
            return owners.contains { module.hasPrefix($0) }
        }
        return false
    }

    /// The module a demangled function name belongs to (`NIOPosix` for
    /// `closure #1 () -> () in NIOPosix.SelectableEventLoop.run() throws -> ()`; `swift::` for
    /// the runtime's C++); nil for compiler-made glue.
    static func module(of symbol: String) -> String? {
        guard let function = FingerprintName.of(symbol) else { return nil }
        if function.contains("swift::") || function.hasPrefix("swift_") { return "swift::" }
        var name = Substring(function)
        while true {
            if name.hasPrefix("static ") {
                name = name.dropFirst("static ".count)
            } else if name.hasPrefix("(extension in ") {
                name = name.dropFirst("(extension in ".count)
            } else if let context = enclosingContext(of: name) {
                // A closure or a witness: the function it is in (the conforming type's module).
                name = context.hasPrefix("conformance ") ? context.dropFirst("conformance ".count) : context
            } else {
                break
            }
        }
        let end = name.firstIndex { ".(<): ".contains($0) } ?? name.endIndex
        return name.isEmpty ? nil : String(name[..<end])
    }

    /// What follows the first ` in ` outside brackets, for names that are inside another
    /// (`closure #1 … in X`, `protocol witness for … in conformance X`); nil for other names.
    private static func enclosingContext(of name: Substring) -> Substring? {
        let nested = ["closure #", "implicit closure #", "protocol witness for ", "default argument "]
        guard nested.contains(where: { name.hasPrefix($0) }) else { return nil }
        var depth = 0
        var previous: Character = " "
        var index = name.startIndex
        while index < name.endIndex {
            let character = name[index]
            switch character {
            case "(", "<", "[": depth += 1
            case ")", "]": depth -= 1
            case ">" where previous != "-": depth -= 1
            case " " where depth == 0 && name[index...].hasPrefix(" in "):
                return name[name.index(index, offsetBy: 4)...]
            default: break
            }
            previous = character
            index = name.index(after: index)
        }
        return nil
    }
}
