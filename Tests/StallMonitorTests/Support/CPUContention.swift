import CoreFoundation
import Foundation
import Glibc
import StallMonitor
import Synchronization

/// Pins threads to one CPU, so that two busy threads must take turns. glibc's affinity calls
/// need `_GNU_SOURCE`, which Swift's Glibc module does not define: they are looked up in libc.
enum CPUPinning {
    private typealias AffinityCall = @convention(c) (pid_t, Int, UnsafeMutableRawPointer) -> Int32
    private static let mask = 1_024 / 8  // cpu_set_t: 1,024 CPUs

    private static func call(_ name: String) -> AffinityCall? {
        guard let libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD), let symbol = dlsym(libc, name) else { return nil }
        return unsafeBitCast(symbol, to: AffinityCall.self)
    }

    /// The lowest CPU the calling thread may run on.
    static func firstAllowedCPU() -> Int? {
        guard let get = call("sched_getaffinity") else { return nil }
        var bytes = [UInt8](repeating: 0, count: mask)
        guard bytes.withUnsafeMutableBytes({ get(0, mask, $0.baseAddress!) }) == 0 else { return nil }
        for (index, byte) in bytes.enumerated() where byte != 0 {
            return index * 8 + byte.trailingZeroBitCount
        }
        return nil
    }

    /// Restricts the calling thread to `cpu`.
    static func pinCallingThread(to cpu: Int) -> Bool {
        guard let set = call("sched_setaffinity"), cpu < mask * 8 else { return false }
        var bytes = [UInt8](repeating: 0, count: mask)
        bytes[cpu / 8] = UInt8(1) << UInt8(cpu % 8)
        return bytes.withUnsafeMutableBytes { set(0, mask, $0.baseAddress!) } == 0
    }
}

/// A thread pinned to one CPU that spins until stopped.
final class CPUHog: Sendable {
    private final class Flag: Sendable {
        let value = Atomic<Bool>(false)
    }

    private let stopping = Flag()
    private let exited = DispatchSemaphore(value: 0)

    init(cpu: Int) {
        let stopping = self.stopping
        let exited = self.exited
        let thread = Thread {
            _ = CPUPinning.pinCallingThread(to: cpu)
            while !stopping.value.load(ordering: .relaxed) {}
            exited.signal()
        }
        thread.start()
    }

    /// Stops the spinning thread and waits for it (at most 5 s). Calling it again does nothing.
    func stop() {
        guard !stopping.value.exchange(true, ordering: .relaxed) else { return }
        _ = exited.wait(timeout: .now() + 5)
    }
}

/// A `beforeWaiting` observer, called after the monitor's, that yields the CPU: with another
/// busy thread on the same CPU, the loop is off the CPU between two passes without sleeping.
final class YieldObserver: @unchecked Sendable {
    /// Counts yields that kept the thread off the CPU for longer than the given time.
    final class PauseCounter: Sendable {
        let count = Atomic<Int>(0)
    }

    private let observer: CFRunLoopObserver
    /// The yields that kept the loop thread off the CPU for longer than asked.
    let longPauses = PauseCounter()

    /// Adds the observer to the calling thread's run loop (common modes); counts the yields that
    /// kept the thread off the CPU for longer than `nanoseconds`.
    init(countingPausesLongerThan nanoseconds: UInt64) {
        let longPauses = self.longPauses
        observer = CFRunLoopObserverCreateWithHandler(nil, CFRunLoopActivity.beforeWaiting.rawValue, true, 0) { _, _ in
            let before = Kernel.monotonicNanoseconds()
            sched_yield()
            if Kernel.monotonicNanoseconds() - before > nanoseconds { longPauses.count.add(1, ordering: .relaxed) }
        }
        CFRunLoopAddObserver(CFRunLoopGetCurrent(), observer, kCFRunLoopCommonModes)
    }

    /// Removes the observer (call on the loop's thread).
    func remove() {
        CFRunLoopObserverInvalidate(observer)
    }
}

/// The first and last moments of a ``CongestedChain``.
final class ChainTimes: Sendable {
    let start = Atomic<UInt64>(0)
    let end = Atomic<UInt64>(0)

    /// From the start of the first task to the end of the last one.
    var milliseconds: Double { Double(end.load(ordering: .acquiring) &- start.load(ordering: .acquiring)) / 1e6 }
}

/// Queued tasks on the current run loop, each short, together long: a congested loop.
enum CongestedChain {
    /// Spins `microseconds`, then queues the next of `remaining` tasks on this run loop and wakes
    /// it; calls `done` after the last one.
    static func run(remaining: Int, microseconds: UInt64, times: ChainTimes, done: @escaping @Sendable () -> Void) {
        let now = Kernel.monotonicNanoseconds()
        if times.start.load(ordering: .relaxed) == 0 { times.start.store(now, ordering: .releasing) }
        let end = now + microseconds * 1_000
        while Kernel.monotonicNanoseconds() < end {}
        guard remaining > 1 else {
            times.end.store(Kernel.monotonicNanoseconds(), ordering: .releasing)
            return done()
        }
        let loop = CFRunLoopGetCurrent()
        CFRunLoopPerformBlock(loop, kCFRunLoopDefaultMode as CFTypeRef) {
            run(remaining: remaining - 1, microseconds: microseconds, times: times, done: done)
        }
        CFRunLoopWakeUp(loop)
    }
}

/// Two busy threads pinned to each CPU the process may use (CPUs 0 up to the online count), so
/// that every thread of the test, the monitor's included, takes turns with them.
final class CPUContention: Sendable {
    private let hogs: [CPUHog]

    init(hogsPerCPU: Int = 2) {
        hogs = (0..<ProcessInfo.processInfo.activeProcessorCount).flatMap { cpu in
            (0..<hogsPerCPU).map { _ in CPUHog(cpu: cpu) }
        }
    }

    /// Stops every hog (waits for each).
    func stop() {
        for hog in hogs { hog.stop() }
    }
}
