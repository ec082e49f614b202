import Dispatch
import Foundation
import Glibc
import ToolSupport

/// The pool work of the modes, each in a function of its own so a stack names it.
enum PoolWork {
    @inline(never)
    static func sleepInDetachedTaskForTest(milliseconds: Int) -> StallFacts {
        let start = DispatchTime.now().uptimeNanoseconds
        usleep(UInt32(milliseconds) * 1_000)
        return facts(#function, since: start)
    }

    /// A short blocking call (the `blocking` mode): a DispatchSemaphore wait, which libdispatch
    /// makes through its own GOT (seen in every build, sanitizers included).
    @inline(never)
    static func waitBrieflyOnSemaphoreForTest(milliseconds: Int) -> StallFacts {
        let semaphore = DispatchSemaphore(value: 0)
        return measure(#function) { _ = semaphore.wait(timeout: .now() + .milliseconds(milliseconds)) }
    }

    @inline(never)
    static func spinInUnstructuredTaskForTest(milliseconds: Int) -> StallFacts {
        let start = DispatchTime.now().uptimeNanoseconds
        spin(milliseconds: milliseconds)
        return facts(#function, since: start)
    }

    @inline(never)
    static func waitOnSemaphoreInGroupChildForTest(milliseconds: Int) -> StallFacts {
        let semaphore = DispatchSemaphore(value: 0)
        return measure(#function) { _ = semaphore.wait(timeout: .now() + .milliseconds(milliseconds)) }
    }

    @inline(never)
    static func readPipeInAsyncLetForTest(milliseconds: Int) async -> StallFacts {
        var ends: [Int32] = [0, 0]
        pipe(&ends)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        defer { close(readEnd) }
        let writer = Thread {
            usleep(UInt32(milliseconds) * 1_000)
            var byte: UInt8 = 1
            write(writeEnd, &byte, 1)
            close(writeEnd)
        }
        writer.start()
        return measure(#function) {
            var byte: UInt8 = 0
            _ = read(readEnd, &byte, 1)
        }
    }

    @inline(never)
    static func sleepWhileStarvingPoolForTest(milliseconds: Int) -> StallFacts {
        let start = DispatchTime.now().uptimeNanoseconds
        usleep(UInt32(milliseconds) * 1_000)
        return facts(#function, since: start)
    }

    /// Runs short jobs (about 50 µs of work each, then a suspension) on the pool for `seconds`.
    static func shortJobs(seconds: Double) async -> Int {
        let end = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        var total = 0
        while DispatchTime.now().uptimeNanoseconds < end {
            total += await withTaskGroup(of: Int.self) { group in
                for _ in 0..<64 {
                    group.addTask {
                        spin(microseconds: 50)
                        await Task.yield()
                        spin(microseconds: 50)
                        return 1
                    }
                }
                return await group.reduce(0, +)
            }
        }
        return total
    }

    // The stall functions are written so that a debug and a release build keep the same frames
    // (no closure the optimizer could fold into its caller, no inlining): their reports must get
    // the same fingerprint in both (BuildModeFingerprintTests).
    @inline(never)
    static func spin(milliseconds: Int) {
        spin(microseconds: milliseconds * 1_000)
        blackHole(milliseconds)
    }

    @inline(never)
    static func blackHole(_ value: Int) {
        if value == -42 { print("") }
    }

    @inline(never)
    static func spin(microseconds: Int) {
        let end = DispatchTime.now().uptimeNanoseconds + UInt64(microseconds) * 1_000
        var sink: UInt64 = 1
        while DispatchTime.now().uptimeNanoseconds < end {
            for value in 0..<200 { sink = sink &* 31 &+ UInt64(value) }
        }
        if sink == 42 { print("") }
    }

    static func measure(_ function: String, _ body: () -> Void) -> StallFacts {
        let begun = CallerClock.begin()
        body()
        let clock = CallerClock.end(begun)
        return StallFacts(
            thread: currentThreadID(), milliseconds: clock.milliseconds, function: function,
            disturbance: clock.disturbance)
    }

    /// What `function` measured since `start` (a `DispatchTime` uptime), on this thread.
    @inline(never)
    static func facts(_ function: String, since start: UInt64) -> StallFacts {
        let ms = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
        return StallFacts(thread: currentThreadID(), milliseconds: ms, function: function)
    }

    /// The calling thread's kernel id, from the `/proc/thread-self` link (`<pid>/task/<tid>`).
    static func currentThreadID() -> Int32 {
        var buffer = [CChar](repeating: 0, count: 64)
        let count = readlink("/proc/thread-self", &buffer, buffer.count - 1)
        guard count > 0 else { return 0 }
        let link = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return Int32(link.split(separator: "/").last ?? "") ?? 0
    }
}

/// An actor on the default executor (its jobs run on the pool).
actor SpinningActor {
    @inline(never)
    func spinInActorMethodForTest(milliseconds: Int) -> StallFacts {
        let start = DispatchTime.now().uptimeNanoseconds
        PoolWork.spin(milliseconds: milliseconds)
        return PoolWork.facts(#function, since: start)
    }
}
