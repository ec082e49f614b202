import Foundation
import Glibc
import StallMonitor

/// The monotonic clock the monitor uses (CLOCK_MONOTONIC), in nanoseconds.
func monotonicNow() -> UInt64 {
    Kernel.monotonicNanoseconds()
}

/// SIGRTMIN and SIGRTMAX (macros calling into glibc, not imported into Swift).
var realTimeSignalMin: Int32 { __libc_current_sigrtmin() }
var realTimeSignalMax: Int32 { __libc_current_sigrtmax() }

/// The real-time signal a monitor picks first when left to choose (see sampler.c).
var firstSignalPicked: Int32 { realTimeSignalMin + (realTimeSignalMax - realTimeSignalMin) / 2 }

/// Runs `body` and returns how long it took on the monotonic clock, in milliseconds.
func measureMilliseconds(_ body: () -> Void) -> Double {
    let start = monotonicNow()
    body()
    return Double(monotonicNow() - start) / 1e6
}

/// The ways tests make a loop thread stall. Every function is `@inline(never)` and named for
/// what it does, so the reports' stacks can be checked for it.
enum StallingWork {
    /// Spins on the CPU for `milliseconds` of wall-clock time.
    @inline(never)
    static func spinOnCPUForStallTest(milliseconds: Int) {
        spinUntil(monotonicNow() + UInt64(milliseconds) * 1_000_000)
    }

    /// Same as ``spinOnCPUForStallTest(milliseconds:)``, under another name (second loop).
    @inline(never)
    static func spinOnSecondLoopForStallTest(milliseconds: Int) {
        spinUntil(monotonicNow() + UInt64(milliseconds) * 1_000_000)
    }

    /// Same as ``spinOnCPUForStallTest(milliseconds:)``, under another name (after a nested run).
    @inline(never)
    static func spinAfterNestedRunForStallTest(milliseconds: Int) {
        spinUntil(monotonicNow() + UInt64(milliseconds) * 1_000_000)
    }

    /// Locks `mutex` (held by another thread) and unlocks it once it got it.
    @inline(never)
    static func waitForMutexHeldElsewhere(_ mutex: TestMutex) {
        pthread_mutex_lock(mutex.pointer)
        pthread_mutex_unlock(mutex.pointer)
    }

    /// Sleeps in one `usleep` call.
    @inline(never)
    static func sleepInUsleepForStallTest(microseconds: UInt32) {
        usleep(microseconds)
    }

    /// Sleeps in `usleep` until `milliseconds` have passed, sleeping again when a signal cut a
    /// sleep short.
    @inline(never)
    static func sleepInUsleepUntilElapsed(milliseconds: Int) {
        let end = monotonicNow() + UInt64(milliseconds) * 1_000_000
        while true {
            let now = monotonicNow()
            guard now < end else { return }
            usleep(UInt32((end - now) / 1_000))
        }
    }

    /// Recurses `depth` frames deep, then spins for `milliseconds`.
    @inline(never)
    static func recurseDeeplyThenSpin(depth: Int, milliseconds: Int) -> Int {
        if depth <= 1 {
            spinOnCPUForStallTest(milliseconds: milliseconds)
            return 1
        }
        return recurseDeeplyThenSpin(depth: depth - 1, milliseconds: milliseconds) &+ 1
    }

    @inline(never)
    private static func spinUntil(_ end: UInt64) {
        var sink: UInt64 = 0
        while monotonicNow() < end {
            for value in 0..<1_000 { sink = sink &* 31 &+ UInt64(value) }
        }
        if sink == 42 { print("", terminator: "") }
    }
}

/// A pthread mutex shared between a holder thread and a loop thread.
final class TestMutex: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        pointer = .allocate(capacity: 1)
        pthread_mutex_init(pointer, nil)
    }

    deinit {
        pthread_mutex_destroy(pointer)
        pointer.deallocate()
    }

    /// Starts a thread that locks the mutex, holds it for `milliseconds`, then unlocks it.
    /// Returns once the mutex is held (at most 5 s) and a semaphore signalled when it is released.
    func holdOnAnotherThread(milliseconds: Int) throws -> DispatchSemaphore {
        let held = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)
        let thread = Thread { [self] in
            pthread_mutex_lock(pointer)
            held.signal()
            usleep(UInt32(milliseconds) * 1_000)
            pthread_mutex_unlock(pointer)
            released.signal()
        }
        thread.name = "mutex-holder"
        thread.start()
        guard held.wait(timeout: .now() + 5) == .success else { throw TestTimeout(what: "the mutex holder") }
        return released
    }
}
