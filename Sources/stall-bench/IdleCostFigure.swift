import Foundation
import StallMonitor
import Synchronization

/// Figure 2: what the monitor costs while the loop sleeps: watchdog wake-ups (it parks without
/// a deadline) and CPU time, over an idle period, against the same idle period without it.
enum IdleCostFigure {
    /// What was counted over one idle period.
    struct Idle: Sendable {
        var wakeups = 0
        var monitorThreadsCPU: Int64 = 0
        var monitorThreads = 0
        var processCPU: Double = 0
        var spans = 0
        var loopWakeups = 0
    }

    static func run(_ context: BenchContext) throws -> FigureResult {
        let seconds = context.pick(10.0, quick: 1.0)
        let without = measure(seconds: seconds, session: nil, threadsBefore: [])
        let threadsBefore = Set(CStallClock.threadIDs())
        let session = try MonitorSession(context)
        let with = measure(seconds: seconds, session: session, threadsBefore: threadsBefore)
        session.stop()
        let method =
            "main RunLoop idle for \(Int(seconds)) s (one timer at the end), counted from 0.4 s after it fell asleep; statistics.watchdogWakeups, and the CPU clocks of the threads the monitor started, read from another thread; process CPU (getrusage) vs the same idle period without a monitor"
        let polling = "a poller at 0.4–1 s would wake \(Int(seconds / 1))–\(Int(seconds / 0.4)) times"
        return FigureResult(
            figure: .idleCost,
            rows: [
                .judged(
                    "2a", "Idle: watchdog wake-ups",
                    value:
                        "\(with.wakeups) in \(Int(seconds)) s (\(polling)); the loop itself woke \(with.loopWakeups)× (\(without.loopWakeups)× without the monitor)",
                    goal: "0",
                    ok: with.wakeups == 0, method: method,
                    data: [
                        "wakeups": Double(with.wakeups), "seconds": seconds, "spans": Double(with.spans),
                        "loopWakeupsWith": Double(with.loopWakeups), "loopWakeupsWithout": Double(without.loopWakeups),
                    ]),
                ResultRow(
                    "2b", "Idle: CPU time of the monitor",
                    value:
                        "monitor threads (\(with.monitorThreads)) \(Format.micro(Double(with.monitorThreadsCPU))); process \(Format.milli(with.processCPU / 1e6, 3)) with vs \(Format.milli(without.processCPU / 1e6, 3)) without",
                    goal: "stated (≈ 0)", verdict: .info, method: method,
                    data: [
                        "monitorThreadsCPUNanoseconds": Double(with.monitorThreadsCPU),
                        "monitorThreads": Double(with.monitorThreads),
                        "processCPUWithNanoseconds": with.processCPU,
                        "processCPUWithoutNanoseconds": without.processCPU,
                    ]),
            ])
    }

    private static func measure(seconds: Double, session: MonitorSession?, threadsBefore: Set<Int32>) -> Idle {
        let result = Mutex(Idle())
        let wakes = WakeCounter()
        defer { wakes.remove() }
        let reader = Thread {
            // Counting starts once the loop has slept past the sampling lead, so the watchdog has
            // seen the previous span end and parked.
            usleep(400_000)
            let monitorThreads =
                session == nil
                ? []
                : Array(Set(CStallClock.threadIDs()).subtracting(threadsBefore).subtracting([Kernel.currentThreadID()]))
            let before = snapshot(session)
            let cpuBefore = threadCPU(monitorThreads)
            let wakesBefore = wakes.value
            usleep(UInt32(seconds * 1e6))
            let after = snapshot(session)
            let cpuAfter = threadCPU(monitorThreads)
            // Threads that ended during the period (e.g. an idle dispatch worker) are left out.
            let monitorCPU = cpuAfter.reduce(Int64(0)) { total, entry in
                total + (cpuBefore[entry.key].map { entry.value - $0 } ?? 0)
            }
            let loopWakeups = wakes.value - wakesBefore
            result.withLock {
                $0 = Idle(
                    wakeups: after.wakeups - before.wakeups, monitorThreadsCPU: monitorCPU,
                    monitorThreads: monitorThreads.count, processCPU: after.processCPU - before.processCPU,
                    spans: after.spans - before.spans,
                    loopWakeups: loopWakeups)
            }
        }
        reader.start()
        MainLoop.idle(seconds: seconds + 0.7)
        return result.withLock { $0 }
    }

    /// CPU time of each thread still alive.
    private static func threadCPU(_ threads: [Int32]) -> [Int32: Int64] {
        var result: [Int32: Int64] = [:]
        for tid in threads {
            let cpu = Kernel.threadCPUNanoseconds(tid)
            if cpu >= 0 { result[tid] = cpu }
        }
        return result
    }

    private static func snapshot(_ session: MonitorSession?) -> Idle {
        let statistics = session?.monitor.statistics
        return Idle(
            wakeups: statistics?.watchdogWakeups ?? 0,
            processCPU: CStallClock.processCPU(),
            spans: statistics?.spans ?? 0)
    }
}
