import Foundation
import Glibc

/// Ways a request handler of the demo server stalls its event loop, each in a function whose name
/// says what it does, so that the reports' stacks name it. `@inline(never)` keeps every function
/// in the stack.
enum HandlerStalls {
    /// Spins on the CPU for `milliseconds` (a JSON encode of a huge body, a regex gone wrong).
    @inline(never)
    static func spinOnCPU(milliseconds: Int) {
        let end = DispatchTime.now().uptimeNanoseconds + UInt64(milliseconds) * 1_000_000
        var sink: UInt64 = 0
        while DispatchTime.now().uptimeNanoseconds < end {
            for value in 0..<1_000 { sink = sink &* 31 &+ UInt64(value) }
        }
        blackHole(sink)
    }

    /// A blocking `read` of a file descriptor whose data arrive `milliseconds` late (a slow disk,
    /// NFS, a FIFO): a pipe another thread writes to after that long.
    @inline(never)
    static func blockingFileRead(milliseconds: Int) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        let writer = Thread {
            usleep(UInt32(milliseconds) * 1000)
            var byte: UInt8 = 1
            _ = write(writeEnd, &byte, 1)
            close(writeEnd)
        }
        writer.start()
        var byte: UInt8 = 0
        while read(readEnd, &byte, 1) < 0 && errno == EINTR {}
        close(readEnd)
    }

    /// Waits `milliseconds` on a semaphore nobody signals (a callback API bridged with a
    /// semaphore); libdispatch makes the wait, so it is seen in every build.
    @inline(never)
    static func waitOnSemaphore(milliseconds: Int) {
        let semaphore = DispatchSemaphore(value: 0)
        _ = semaphore.wait(timeout: .now() + .milliseconds(milliseconds))
        withExtendedLifetime(semaphore) {}  // not a tail call: this frame stays in the stack
    }

    /// Sleeps `milliseconds` on the loop (a retry back-off written with `usleep`).
    @inline(never)
    static func sleepOnLoop(milliseconds: Int) {
        usleep(UInt32(milliseconds) * 1000)
    }

    /// Waits for a mutex that another thread holds for `milliseconds` (a cache shared with a
    /// slow writer).
    @inline(never)
    static func waitForHeldLock(milliseconds: Int) {
        nonisolated(unsafe) let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        let held = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)
        let holder = Thread {
            pthread_mutex_lock(mutex)
            held.signal()
            usleep(UInt32(milliseconds) * 1000)
            pthread_mutex_unlock(mutex)
            released.signal()
        }
        holder.name = "lock-holder"
        holder.start()
        held.wait()
        pthread_mutex_lock(mutex)
        pthread_mutex_unlock(mutex)
        released.wait()  // the holder may still be returning from pthread_mutex_unlock
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Spins `milliseconds` in a task the handler scheduled on its event loop.
    @inline(never)
    static func spinInScheduledTask(milliseconds: Int) {
        spinOnCPU(milliseconds: milliseconds)
    }

    @inline(never)
    static func blackHole(_ value: UInt64) {
        if value == 0x5eed { print("") }
    }
}
