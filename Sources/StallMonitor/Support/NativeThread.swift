import CStallMonitor
import Foundation
import Glibc

/// Starts the monitor's own threads (watchdog, timers) as plain detached POSIX threads, not
/// Foundation `Thread`s: starting a `Thread` runs Foundation's thread set-up on both sides (about
/// 0.1 MiB of its code pages in a host that starts no `Thread` itself), and these threads use
/// nothing of it. Their owners wait for them to end with a semaphore of their own.
enum NativeThread {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Runs `body` on a new detached thread named `name` (the kernel's name: at most 15 bytes, so
    /// `stall-…`, which is how the benchmarks and a reader of `/proc` tell the monitor's threads
    /// from the host's) with a stack of `stackSize` bytes (at least the system's minimum). Falls
    /// back to a Foundation `Thread` if the thread cannot be created.
    static func start(name: String, stackSize: Int, _ body: @escaping @Sendable () -> Void) {
        precondition(name.utf8.count <= 15, "a thread's kernel name has at most 15 bytes")
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        pthread_attr_setstacksize(&attributes, max(stackSize, Int(PTHREAD_STACK_MIN)))
        let named: @Sendable () -> Void = {
            _ = CStallMonitor_set_thread_name(name)
            body()
        }
        let context = Unmanaged.passRetained(Body(named)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(
            &thread, &attributes,
            { context in
                guard let context else { return nil }
                let body = Unmanaged<Body>.fromOpaque(context).takeRetainedValue()
                body.run()
                return nil
            }, context)
        guard created != 0 else { return }
        Unmanaged<Body>.fromOpaque(context).release()
        let fallback = Thread { named() }
        fallback.name = name
        fallback.stackSize = stackSize
        fallback.start()
    }
}
