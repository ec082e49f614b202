#if canImport(Glibc)
import Glibc

// Preloaded (LD_PRELOAD) into a program run under valgrind 3.19, so that callgrind can count an
// `async main` program (stall-bench figure 18, the Hummingbird 2 server).
//
// Swift's async main ends the main thread in `dispatch_main()`, whose thread then waits in
// `sigsuspend` with a mask that libdispatch keeps in read-only memory (a `static const`).
// valgrind 3.19 edits the mask it is given in place, faults on it and stops the whole program
// ("Valgrind received a signal 11 (SIGSEGV)", at the same address with any tool). This
// `sigsuspend` hands the C library's the same mask from a writable copy: nothing else changes.

/// The C library's `sigsuspend` (the next definition after this library's).
private let librarySigsuspend: (@convention(c) (UnsafePointer<sigset_t>?) -> Int32)? = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: -1), "sigsuspend") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (UnsafePointer<sigset_t>?) -> Int32).self)
}()

/// `sigsuspend(mask)`, the mask passed on from a copy on this thread's stack.
@_cdecl("sigsuspend")
public func sigsuspendFromWritableCopy(_ mask: UnsafePointer<sigset_t>?) -> Int32 {
    guard let librarySigsuspend else {
        errno = ENOSYS
        return -1
    }
    guard let mask else { return librarySigsuspend(nil) }
    var copy = mask.pointee
    return librarySigsuspend(&copy)
}
#endif
