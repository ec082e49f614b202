import CStallMonitor
import Glibc

/// The few kernel and C library facts of the C shim that this package's tests, benchmarks and
/// demos need, in Swift: they reach the shim only through this (they do not import
/// `CStallMonitor`). Each is the shim's own call, unchanged.
package enum Kernel {
    /// CLOCK_MONOTONIC in nanoseconds (vDSO, no syscall): the clock the monitor dates spans with.
    @inlinable
    package static func monotonicNanoseconds() -> UInt64 { CStallMonitor_monotonic_ns() }

    /// The resolution of CLOCK_MONOTONIC_COARSE in nanoseconds (one scheduler tick: 1–10 ms),
    /// 4 ms when the kernel does not say.
    package static let coarseClockResolution: UInt64 = {
        var resolution = timespec()
        guard clock_getres(CLOCK_MONOTONIC_COARSE, &resolution) == 0, resolution.tv_sec == 0, resolution.tv_nsec > 0
        else { return 4_000_000 }
        return UInt64(resolution.tv_nsec)
    }()

    /// Whether this executable's `epoll_wait` is the shim's pass-through (SwiftNIO loops can then
    /// wake a sleeping watchdog); false where a sanitizer runtime's or the host's won the link.
    package static var epollWaitWakesWatchdog: Bool { CStallMonitor_epoll_wait_is_ours() != 0 }

    /// Whether a watchdog watches the concurrency pool's enqueues through the shim's hook (from
    /// its first sleep after `start`): each enqueue then notes the job.
    package static var poolEnqueuesWatched: Bool { CStallMonitor_pool_enqueues_watched() != 0 }

    /// A new epoll descriptor (close-on-exec), -1 on failure.
    package static func epollCreate() -> Int32 { CStallMonitor_epoll_create() }

    /// One wait of at most `timeoutMs` for an event on `epfd`, through this executable's
    /// `epoll_wait` (the shim's pass-through, where it won the link) or the C library's
    /// `epoll_pwait` directly; the number of events, -1 on error.
    @inline(__always)
    package static func epollWaitOnce(_ epfd: Int32, timeoutMs: Int32, throughShim: Bool) -> Int32 {
        CStallMonitor_epoll_wait_once(epfd, timeoutMs, throughShim ? 1 : 0)
    }

    /// Whether the shim's `dispatch_async(_f)` pass-through has seen work reach the main queue
    /// while a monitor watched it (the MainActor can then wake a sleeping watchdog); false where a
    /// sanitizer runtime's or the host's definition won the link, or before any such work.
    package static var mainQueueEnqueuesWakeWatchdog: Bool { CStallMonitor_main_enqueues_seen() != 0 }

    /// The calling thread's kernel thread id (`gettid`).
    package static func currentThreadID() -> pid_t { CStallMonitor_gettid() }

    /// CPU time (user + system) consumed so far by thread `tid` of this process, in nanoseconds;
    /// -1 when the thread no longer exists.
    package static func threadCPUNanoseconds(_ tid: pid_t) -> Int64 { CStallMonitor_thread_cpu_ns(tid) }

    /// Names the calling thread in the kernel (at most 15 bytes; `/proc/.../comm`, gdb, top).
    /// Returns 0 or an errno.
    @discardableResult
    package static func nameCurrentThread(_ name: String) -> Int32 { CStallMonitor_set_thread_name(name) }

    /// Bytes the heap has handed out and not had back, every arena together (glibc `mallinfo2`).
    package static func heapInUse() -> Int { Int(CStallMonitor_heap_in_use()) }

    /// The calling thread's stack, `[low, high)` (`pthread_getattr_np`); nil when unknown.
    package static func currentStackBounds() -> (low: UInt, high: UInt)? {
        var low: UInt = 0
        var high: UInt = 0
        return CStallMonitor_current_stack_bounds(&low, &high) == 0 ? (low, high) : nil
    }

    /// The writable mapping of this process that contains `address`, `[low, high)` (from
    /// `/proc/self/maps`); nil when none does or the file cannot be read.
    package static func writableMapping(containing address: UInt) -> (low: UInt, high: UInt)? {
        var low: UInt = 0
        var high: UInt = 0
        return CStallMonitor_mapping_containing(address, &low, &high) == 0 ? (low, high) : nil
    }

    /// The calling thread's thread pointer (x86_64: the fs base); 0 where not supported.
    package static func threadPointer() -> UInt { CStallMonitor_thread_pointer() }

    /// The program's entry point (`getauxval(AT_ENTRY)`), an address inside the executable; 0 when unknown.
    package static func programEntry() -> UInt { CStallMonitor_program_entry() }

    /// The path of the loaded image that contains `address` (`dladdr`), as the loader names it;
    /// nil when no image does.
    package static func imagePath(containing address: UInt) -> String? {
        var symbol: UnsafePointer<CChar>?
        var start: UInt = 0
        var image: UnsafePointer<CChar>?
        _ = CStallMonitor_dladdr(address, &symbol, &start, &image)
        return image.map { String(cString: $0) }
    }

    /// Whether the sampling signal still runs the monitor's handler (a `sigaction` query): false
    /// when the host replaced the handler or set SIG_DFL or SIG_IGN since, or none is installed.
    package static var samplingHandlerInstalled: Bool { CStallMonitor_sampler_handler_installed() != 0 }
}
