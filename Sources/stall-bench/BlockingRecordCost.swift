import ArgumentParser
import Dispatch
import Foundation
import Glibc
import StallMonitor

/// `stall-bench blocking-record-cost`: the workload of figure 17d. A Swift task makes `--calls`
/// `usleep` calls of `--sleep-us` each, three async functions deep (so the record reads an async
/// chain), timing each around the call on its own clock; with a detector running (threshold
/// 500 µs) every call is recorded. Prints, as JSON, each call's own-clock time minus the duration
/// its record holds: what recording cost the calling thread after the call returned.
struct BlockingRecordCost: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blocking-record-cost", abstract: "Workload of the blocking-call record cost figure.",
        shouldDisplay: false)

    @Option(help: "How many calls.")
    var calls = 200

    @Option(help: "Microseconds each usleep asks for.")
    var sleepUs: Int32 = 2_000

    /// What the workload prints.
    struct Result: Codable {
        /// Per recorded call: the caller's clock minus the record's duration, in microseconds.
        var excessMicroseconds: [Double]
        /// Calls made, and calls whose record carried async callers.
        var calls: Int
        var withAsyncCallers: Int
    }

    func run() throws {
        let detector = try BlockingCallDetector.start(.init(threshold: .microseconds(500)))
        defer { detector.stop() }
        let (calls, sleepUs) = (calls, sleepUs)
        let ownClock = Locked<[(start: UInt64, nanoseconds: UInt64)]>([])
        let done = DispatchSemaphore(value: 0)
        Task {
            for _ in 0..<calls {
                let timed = await RecordCostChain.outer(sleepUs: sleepUs)
                ownClock.withLock { $0.append(timed) }
            }
            done.signal()
        }
        done.wait()
        let recorded = detector.takeCalls().filter { $0.call == "usleep" }
        var excess: [Double] = []
        for timed in ownClock.withLock({ $0 }) {
            // The record whose start lies inside the caller's own interval.
            guard
                let record = recorded.first(where: {
                    $0.startNanoseconds >= timed.start && $0.startNanoseconds <= timed.start + timed.nanoseconds
                })
            else { continue }
            let recordedNanoseconds =
                Double(record.duration.components.seconds) * 1e9 + Double(record.duration.components.attoseconds) / 1e9
            excess.append((Double(timed.nanoseconds) - recordedNanoseconds) / 1000)
        }
        let result = Result(
            excessMicroseconds: excess, calls: calls,
            withAsyncCallers: recorded.filter { !$0.asyncCallers.isEmpty }.count)
        print(String(decoding: try JSONEncoder().encode(result), as: UTF8.self))
    }
}

/// Three async functions, each suspending first, the innermost timing a usleep.
enum RecordCostChain {
    @inline(never) static func outer(sleepUs: Int32) async -> (start: UInt64, nanoseconds: UInt64) {
        await Task.yield()
        return await middle(sleepUs: sleepUs)
    }

    @inline(never) static func middle(sleepUs: Int32) async -> (start: UInt64, nanoseconds: UInt64) {
        await Task.yield()
        return await inner(sleepUs: sleepUs)
    }

    @inline(never) static func inner(sleepUs: Int32) async -> (start: UInt64, nanoseconds: UInt64) {
        await Task.yield()
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        usleep(useconds_t(sleepUs))
        var end = timespec()
        clock_gettime(CLOCK_MONOTONIC, &end)
        let startNanoseconds = UInt64(start.tv_sec) * 1_000_000_000 + UInt64(start.tv_nsec)
        return (startNanoseconds, UInt64(end.tv_sec) * 1_000_000_000 + UInt64(end.tv_nsec) - startNanoseconds)
    }
}
