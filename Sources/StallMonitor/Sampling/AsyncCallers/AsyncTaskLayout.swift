import Glibc

/// Where a running task's async context chain lies, checked against the Swift runtime when a
/// monitor starts (see ``AsyncCallChainReader``).
///
/// Known for libswift_Concurrency's internal layout version 1 (Swift 6.x) on x86_64:
/// `AsyncTask` begins with its `Job` (heap object header, two scheduler words, flags and id,
/// voucher, reserved, `ResumeTask`), so `ResumeTask` (the function the current job started by
/// calling) is at byte 56 and `ResumeContext` (its `AsyncContext`) at byte 64. An `AsyncContext`
/// begins with `Parent` (the caller's context, 0 at the task's root) and `ResumeParent` (the
/// caller's partial function to resume on return). Elsewhere ``verify(activeTaskOffset:)`` says
/// why not, and chains are omitted with that reason (never read with a guess).
struct AsyncTaskLayout: Sendable {
    /// Offset of the runtime's active-task word from a thread's thread pointer (``PoolLayout``).
    var activeTaskOffset: Int
    /// The address every `AsyncTask`'s first word (its metadata) holds.
    var taskMetadata: UInt
    /// Offsets in an `AsyncTask`.
    var resumeTaskOffset = 56
    var resumeContextOffset = 64
    /// Offsets in an `AsyncContext` (`ResumeParent` right after `Parent`: the two are read as one pair).
    var parentOffset = 0
    var resumeParentOffset = 8

    /// The runtime's internal layout version this layout was verified for.
    static let verifiedLayoutVersion: UInt32 = 1

    /// Checks the runtime's exported debug variables; the layout, or why it cannot be trusted.
    static func verify(activeTaskOffset: Int) -> Result<AsyncTaskLayout, AsyncChainOmission> {
        #if os(Linux) && arch(x86_64)
        let handle = UnsafeMutableRawPointer(bitPattern: 0)  // RTLD_DEFAULT
        guard let version = dlsym(handle, "_swift_concurrency_debug_internal_layout_version"),
            let metadata = dlsym(handle, "_swift_concurrency_debug_asyncTaskMetadata")
        else {
            return .failure(
                AsyncChainOmission("the Swift runtime exports no task layout version: async callers are not read"))
        }
        let found = version.load(as: UInt32.self)
        guard found == verifiedLayoutVersion else {
            return .failure(
                AsyncChainOmission(
                    "the Swift runtime's task layout version is \(found), not \(verifiedLayoutVersion): async callers are not read"
                ))
        }
        // The variable holds the metadata's address.
        let address = metadata.load(as: UInt.self)
        guard address != 0 else {
            return .failure(
                AsyncChainOmission("the Swift runtime's task metadata is unknown: async callers are not read"))
        }
        return .success(AsyncTaskLayout(activeTaskOffset: activeTaskOffset, taskMetadata: address))
        #else
        return .failure(AsyncChainOmission("async callers are read on x86_64 Linux only"))
        #endif
    }
}

/// Why async callers were not read (said once per report, in its sampling section).
struct AsyncChainOmission: Error, Sendable, Equatable {
    var reason: String

    init(_ reason: String) { self.reason = reason }
}
