import CoreFoundation
import Foundation

/// One run of a loop workload: how many passes, and the median time between passes.
struct LoopRun {
    var passes: Int
    var wall: UInt64
    var medianPass: Double
    var perSecond: Double { Double(passes) / (Double(wall) / 1e9) }
}

/// Times every pass of a loop run into preallocated memory (one clock read per pass).
final class PassRecorder: @unchecked Sendable {
    private let times: UnsafeMutablePointer<UInt64>
    private let capacity: Int
    private var count = 0

    init(capacity: Int) {
        self.capacity = capacity
        times = .allocate(capacity: capacity)
    }

    deinit { times.deallocate() }

    func reset() { count = 0 }

    /// Records that a pass reached this point now; returns the time.
    @inline(__always)
    func mark() -> UInt64 {
        let now = CStallClock.now()
        if count < capacity {
            times[count] = now
            count += 1
        }
        return now
    }

    /// The run's passes and median pass time.
    func run(wall: UInt64) -> LoopRun {
        let steps = count > 1 ? (1..<count).map { Double(times[$0] &- times[$0 - 1]) } : []
        return LoopRun(passes: count, wall: wall, medianPass: Stats.median(steps))
    }
}

/// A chain of `RunLoop.perform` blocks, each scheduling the next: every pass runs one block.
final class PerformChain: @unchecked Sendable {
    private let end: UInt64
    private let work: Int
    private let recorder: PassRecorder
    nonisolated(unsafe) private static let table = Workloads.makeTable()
    private var sink: UInt64 = 1

    private init(end: UInt64, work: Int, recorder: PassRecorder) {
        self.end = end
        self.work = work
        self.recorder = recorder
    }

    /// Work units that take about `nanoseconds` of CPU (best of a few tries).
    static func unitsFor(nanoseconds: Double) -> Int {
        var best = Double.infinity
        var sink: UInt64 = 1
        for _ in 0..<20 {
            let began = CStallClock.threadCPU()
            for _ in 0..<1_000 { sink = Workloads.workUnit(table, sink) }
            best = min(best, Double(CStallClock.threadCPU() - began) / 1_000)
        }
        Workloads.blackHole(sink)
        return max(1, Int(nanoseconds / best))
    }

    static func measure(seconds: Double, workUnits: Int, recorder: PassRecorder) -> LoopRun {
        recorder.reset()
        let began = CStallClock.now()
        let chain = PerformChain(end: began + UInt64(seconds * 1e9), work: workUnits, recorder: recorder)
        MainLoop.run { finish in chain.step(finish) }
        return recorder.run(wall: CStallClock.now() - began)
    }

    private func step(_ done: @escaping @Sendable () -> Void) {
        for _ in 0..<work { sink = Workloads.workUnit(Self.table, sink) }
        if recorder.mark() >= end {
            Workloads.blackHole(sink)
            return done()
        }
        RunLoop.main.perform { self.step(done) }
        CFRunLoopWakeUp(CFRunLoopGetMain())  // CF does not wake a sleeping loop for a new block
    }
}

/// A repeating CFRunLoopTimer with a 1 µs interval: always due, it fires once per loop pass.
enum TimerLoop {
    static func measure(seconds: Double, recorder: PassRecorder) -> LoopRun {
        recorder.reset()
        let began = CStallClock.now()
        let end = began + UInt64(seconds * 1e9)
        MainLoop.run { finish in
            let timer = CFRunLoopTimerCreateWithHandler(nil, CFAbsoluteTimeGetCurrent(), 1e-6, 0, 0) { timer in
                if recorder.mark() >= end {
                    CFRunLoopTimerInvalidate(timer)
                    finish()
                }
            }
            CFRunLoopAddTimer(CFRunLoopGetMain(), timer, kCFRunLoopCommonModes)
        }
        return recorder.run(wall: CStallClock.now() - began)
    }
}
