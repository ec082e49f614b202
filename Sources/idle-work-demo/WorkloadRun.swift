import CoreFoundation
import Foundation
import StallMonitor

/// How one run of the workload went: how long it took and how responsive the loop stayed.
struct WorkloadResult: Codable, Sendable {
    /// `direct` or `idleQueue`.
    var mode: String
    var items: Int
    /// From submitting the first item to the end of the last one.
    var completionMs: Double
    /// Stalls the monitor detected during the run.
    var stalls: Int
    /// Reports written for them.
    var reports: Int
    /// The longest stall reported, in milliseconds (0 without one).
    var longestStallMs: Double
    /// How late the 50 ms probe timer fired, in milliseconds.
    var timerFires: Int
    var timerLatenessP50Ms: Double
    var timerLatenessP99Ms: Double
    var timerLatenessMaxMs: Double
    /// Idle-queue passes (0 when run directly).
    var idlePasses: Int
}

/// Runs `items` pieces of CPU work of `itemMs` each on the main run loop, either all queued to the
/// loop at once (as `RunLoop.main.perform` or `DispatchQueue.main.async` would) or through an
/// ``IdleWorkQueue``, while a timer that asks to fire every 50 ms measures how late the loop lets
/// it fire. Call on the main thread.
enum WorkloadRun {
    static let probeInterval = 0.05

    static func run(
        idleQueue: Bool, items: Int, itemMs: Int, budgetMs: Int,
        monitor: StallMonitor, stalls: StallLog
    ) throws -> WorkloadResult {
        let main = CFRunLoopGetMain()!
        let before = monitor.statistics
        stalls.reset()
        let probe = LatenessProbe(interval: probeInterval)
        probe.start(on: main)

        let done = Counter()
        let started = Kernel.monotonicNanoseconds()
        var finished: UInt64 = 0
        let finish: @Sendable () -> Void = {
            if done.increment() == items { CFRunLoopStop(CFRunLoopGetMain()) }
        }
        var queue: IdleWorkQueue?
        if idleQueue {
            let idle = try IdleWorkQueue(loop: .main, .init(budget: .milliseconds(budgetMs), capacity: max(items, 1)))
            for index in 0..<items {
                idle.submit(label: "item \(index)") {
                    Workload.renderRow(milliseconds: itemMs)
                    finish()
                }
            }
            queue = idle
        } else {
            for _ in 0..<items {
                CFRunLoopPerformBlock(main, kCFRunLoopCommonModes) {
                    Workload.renderRow(milliseconds: itemMs)
                    finish()
                }
            }
            CFRunLoopWakeUp(main)
        }
        while done.value < items {
            _ = RunLoop.main.run(mode: .default, before: .distantFuture)
        }
        finished = Kernel.monotonicNanoseconds()
        // Let the loop go idle a little so the monitor sees the last span end, measuring meanwhile.
        _ = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.3))
        probe.stop()
        monitor.flush()
        let idlePasses = queue?.statistics.passes ?? 0
        let unrun = queue?.close() ?? []
        precondition(unrun.isEmpty, "every item ran")
        let after = monitor.statistics
        let lateness = probe.latenessMs.sorted()
        return WorkloadResult(
            mode: idleQueue ? "idleQueue" : "direct", items: items,
            completionMs: Double(finished - started) / 1e6,
            stalls: after.stallsDetected - before.stallsDetected,
            reports: after.reportsWritten - before.reportsWritten,
            longestStallMs: stalls.longestMs,
            timerFires: lateness.count,
            timerLatenessP50Ms: percentile(lateness, 0.5),
            timerLatenessP99Ms: percentile(lateness, 0.99),
            timerLatenessMaxMs: lateness.last ?? 0,
            idlePasses: idlePasses)
    }

    private static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((p * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }
}

/// The work itself: a stand-in for laying out and rendering one row, spinning on the CPU.
enum Workload {
    @inline(never)
    static func renderRow(milliseconds: Int) {
        let end = Kernel.monotonicNanoseconds() + UInt64(milliseconds) * 1_000_000
        while Kernel.monotonicNanoseconds() < end {}
    }
}
