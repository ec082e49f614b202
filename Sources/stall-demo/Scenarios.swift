import CoreFoundation
import Foundation
import Glibc
import Synchronization

/// Ways the demo stalls its main thread, each in a function whose name says what it does, so the
/// reports' stacks are easy to recognise. `@inline(never)` keeps every function in the stack.
enum Scenarios {
    /// Spins on the CPU for `milliseconds`.
    @inline(never)
    static func spinOnCPU(milliseconds: Int) {
        let end = DispatchTime.now().uptimeNanoseconds + UInt64(milliseconds) * 1_000_000
        var sink: UInt64 = 0
        while DispatchTime.now().uptimeNanoseconds < end {
            for value in 0..<1_000 { sink = sink &* 31 &+ UInt64(value) }
        }
        blackHole(sink)
    }

    /// Waits `milliseconds` for a mutex that a worker thread holds.
    @inline(never)
    static func waitForLockHeldByWorker(milliseconds: Int) {
        nonisolated(unsafe) let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        let held = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)
        let worker = Thread {
            pthread_mutex_lock(mutex)
            held.signal()
            usleep(UInt32(milliseconds) * 1000)
            pthread_mutex_unlock(mutex)
            released.signal()
        }
        worker.name = "lock-holder"
        worker.start()
        held.wait()
        pthread_mutex_lock(mutex)
        pthread_mutex_unlock(mutex)
        // The worker may still be returning from pthread_mutex_unlock: free the mutex only once it
        // says it has.
        released.wait()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Sleeps in `usleep` (the monitor must not cut the sleep short).
    @inline(never)
    static func sleepWithUsleep(milliseconds: Int) {
        usleep(UInt32(milliseconds) * 1000)
    }

    /// Recurses `depth` frames deep, then spins for `milliseconds`.
    @inline(never)
    static func recurseThenSpin(depth: Int, milliseconds: Int) -> Int {
        if depth <= 1 {
            spinOnCPU(milliseconds: milliseconds)
            return 1
        }
        return recurseThenSpin(depth: depth - 1, milliseconds: milliseconds) &+ 1
    }

    /// One of thousands of short tasks queued on the run loop one after another: each pass of
    /// the loop is short, but the loop never gets to sleep.
    @inline(never)
    static func runCongestedTask(remaining: Int, microseconds: Int, done: @escaping @Sendable () -> Void) {
        let end = DispatchTime.now().uptimeNanoseconds + UInt64(microseconds) * 1_000
        while DispatchTime.now().uptimeNanoseconds < end {}
        guard remaining > 1 else { return done() }
        RunLoop.main.perform {
            runCongestedTask(remaining: remaining - 1, microseconds: microseconds, done: done)
        }
        CFRunLoopWakeUp(CFRunLoopGetMain())  // CF does not wake a sleeping loop for a new block
    }

    /// Short work, below the threshold: must not be reported.
    @inline(never)
    static func shortWorkBelowThreshold(milliseconds: Int) {
        spinOnCPU(milliseconds: milliseconds)
    }

    /// Parks the thread spinning in this very function until `release` is set: the loop calls
    /// nothing, so a debugger's backtrace and a sample agree on the leaf.
    @inline(never)
    static func parkSpinning(until release: ParkRelease) {
        var sink: UInt64 = 1
        while !release.flag.load(ordering: .relaxed) { sink = sink &* 6_364_136_223_846_793_005 &+ 1 }
        blackHole(sink)
    }

    /// Parks the thread asleep in `poll` (no descriptors) for `milliseconds`.
    @inline(never)
    static func parkSleeping(milliseconds: Int32) {
        _ = poll(nil, 0, milliseconds)
    }

    @inline(never)
    static func blackHole(_ value: UInt64) {
        if value == 42 { print("", terminator: "") }
    }
}

/// Ends a `Scenarios.parkSpinning` from another thread.
final class ParkRelease: Sendable {
    let flag = Atomic<Bool>(false)
}
