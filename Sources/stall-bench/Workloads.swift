import Foundation
import Glibc

/// Code the benchmarks run on the stuck thread. `@inline(never)` keeps every function a real
/// frame, so stacks have the depth asked for.
enum Workloads {
    /// Spins until CLOCK_MONOTONIC reaches `end`.
    @inline(never)
    static func spin(until end: UInt64) {
        while CStallClock.now() < end {}
    }

    /// Recurses `depth` frames deep, then calls `body`.
    @inline(never)
    static func recurse(_ depth: Int, _ body: () -> Void) -> Int {
        if depth <= 0 {
            body()
            return 0
        }
        // An opaque call after the recursive one: no tail call, no accumulator loop (LLVM turns
        // `f(n - 1) + 1` into a loop), so every level stays on the stack.
        return opaque(recurse(depth - 1, body), depth)
    }

    @inline(never)
    static func opaque(_ value: Int, _ depth: Int) -> Int {
        value &+ (depth & 1)
    }

    /// A unit of CPU work (~1 µs): hashes over a small table. Returns a value to keep it alive.
    @inline(never)
    static func workUnit(_ table: UnsafeMutablePointer<UInt64>, _ seed: UInt64) -> UInt64 {
        var hash = seed
        for index in 0..<256 {
            hash = (hash ^ table[(Int(truncatingIfNeeded: hash) &+ index) & 4095]) &* 0x100_0000_01b3
            table[index & 4095] &+= hash >> 7
        }
        return hash
    }

    /// Work units done until `end`; the count is the amount of work the thread got through.
    @inline(never)
    static func workUntil(_ end: UInt64, table: UnsafeMutablePointer<UInt64>) -> (units: Int, sink: UInt64) {
        var units = 0
        var sink: UInt64 = 1
        while CStallClock.now() < end {
            for _ in 0..<16 { sink = workUnit(table, sink) }
            units += 16
        }
        return (units, sink)
    }

    /// A table for ``workUnit(_:_:)`` (32 KiB).
    static func makeTable() -> UnsafeMutablePointer<UInt64> {
        let table = UnsafeMutablePointer<UInt64>.allocate(capacity: 4096)
        for index in 0..<4096 { table[index] = UInt64(index) &* 0x9e37_79b9_7f4a_7c15 }
        return table
    }

    /// Keeps `value` from being optimized away.
    @inline(never)
    static func blackHole(_ value: UInt64) {
        if value == 0x5eed { print("", terminator: "") }
    }
}

/// Gaps in the stuck thread's own clock loop: every step of the loop longer than a floor is a
/// moment the thread did not run its code (a signal handler, a preemption, an interrupt).
final class GapRecorder: @unchecked Sendable {
    let capacity: Int
    private(set) var count = 0
    private let starts: UnsafeMutablePointer<UInt64>
    private let lengths: UnsafeMutablePointer<UInt64>

    init(capacity: Int) {
        self.capacity = capacity
        starts = .allocate(capacity: capacity)
        lengths = .allocate(capacity: capacity)
    }

    deinit {
        starts.deallocate()
        lengths.deallocate()
    }

    func reset() { count = 0 }

    /// Reads the clock in a tight loop until `end`, recording every step longer than `floor` ns.
    @inline(never)
    func spin(until end: UInt64, floor: UInt64) {
        var last = CStallClock.now()
        while last < end {
            let now = CStallClock.now()
            if now &- last > floor && count < capacity {
                starts[count] = last
                lengths[count] = now &- last
                count += 1
            }
            last = now
        }
    }

    /// The recorded gaps: (start, length) in ns.
    var gaps: [(start: UInt64, length: UInt64)] {
        (0..<count).map { (starts[$0], lengths[$0]) }
    }
}
