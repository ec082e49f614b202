import Dispatch
import Foundation

/// Stalls inside the calls StallMonitor defines itself (its `epoll_wait` and `dispatch_async`
/// interposers), made from the demo's own code: a debug build keeps the interposer's frame in
/// the stack, a release build may tail-call through it, and the report's fingerprint must be the
/// same in both. `@inline(never)` keeps every function of the demo in the stack.
enum InterposedCallScenarios {
    /// Sleeps `milliseconds` in `epoll_wait` on an epoll instance with nothing to wait for.
    @inline(never)
    static func waitInEpoll(milliseconds: Int32) {
        let descriptor = epollCreate(0)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        // Room for one `struct epoll_event` (12 bytes, packed on x86_64).
        let event = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 8)
        defer { event.deallocate() }
        let end = DispatchTime.now().uptimeNanoseconds + UInt64(milliseconds) * 1_000_000
        // A signal (none is sent to a sleeping thread, but a host's may be) ends the wait early.
        while case let now = DispatchTime.now().uptimeNanoseconds, now < end {
            _ = epollWait(descriptor, event, 1, Int32((end - now + 999_999) / 1_000_000))
        }
    }

    /// Spends `milliseconds` queueing empty blocks on the global queue, each through
    /// `dispatch_async` (a few hundred thousand at most, drained by the pool's workers meanwhile):
    /// nearly every sample is in `enqueueOne`, whatever else the machine does.
    @inline(never)
    static func enqueueForMilliseconds(_ milliseconds: Int) {
        let end = DispatchTime.now().uptimeNanoseconds + UInt64(milliseconds) * 1_000_000
        while DispatchTime.now().uptimeNanoseconds < end {
            for _ in 0..<64 { enqueueOne() }
        }
    }

    @inline(never)
    static func enqueueOne() {
        DispatchQueue.global().async {}
    }
}

// Glibc's Swift module leaves out <sys/epoll.h>: the two functions by their C names. Their
// arguments are integers and one pointer, passed in the same registers by both conventions. The
// static linker binds `epoll_wait` to the definition in the executable, StallMonitor's.
@_silgen_name("epoll_create1")
private func epollCreate(_ flags: Int32) -> Int32

@_silgen_name("epoll_wait")
private func epollWait(
    _ descriptor: Int32, _ events: UnsafeMutableRawPointer?, _ capacity: Int32, _ timeout: Int32
) -> Int32
