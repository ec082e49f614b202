import Foundation

/// Figure 15: what the monitor costs an idle process, per loop kind: the watchdog thread's
/// wake-ups and the whole process's CPU time over an idle period, monitored against the same
/// host process unmonitored, in alternating runs.
enum IdlePerLoopFigure {
    /// What one idle period of one host process cost, summed over its threads (from /proc).
    struct Idle {
        /// How long the period lasted.
        var seconds = 0.0
        /// Voluntary context switches of the `stall-watchdog` thread.
        var watchdogWakeups = 0.0
        /// CPU time (schedstat, ns) of the `stall-watchdog` thread.
        var watchdogCPU = 0.0
        /// Voluntary context switches of the monitor's other threads (`stall-writer`, `stall-heartbeat`…).
        var otherMonitorWakeups = 0.0
        /// CPU time (schedstat, ns) of the monitor's other threads.
        var otherMonitorCPU = 0.0
        /// Voluntary context switches of every thread alive at both ends.
        var processWakeups = 0.0
        /// CPU time (schedstat, ns) of every thread alive at both ends.
        var processCPU = 0.0
        /// utime + stime (/proc/<pid>/stat; clock ticks), ns.
        var processTicksCPU = 0.0

        /// Adds another period's counts.
        static func + (left: Idle, right: Idle) -> Idle {
            Idle(
                seconds: left.seconds + right.seconds, watchdogWakeups: left.watchdogWakeups + right.watchdogWakeups,
                watchdogCPU: left.watchdogCPU + right.watchdogCPU,
                otherMonitorWakeups: left.otherMonitorWakeups + right.otherMonitorWakeups,
                otherMonitorCPU: left.otherMonitorCPU + right.otherMonitorCPU,
                processWakeups: left.processWakeups + right.processWakeups,
                processCPU: left.processCPU + right.processCPU,
                processTicksCPU: left.processTicksCPU + right.processTicksCPU)
        }
    }

    /// Process CPU below this (ns per second) counts as this in a ratio's denominator: an idle
    /// process may use no CPU at all.
    static let cpuFloorPerSecond = 1_000.0
    /// The goal: process CPU at most this times the unmonitored process's.
    static let cpuRatioGoal = 1.2
    /// The goal: watchdog wake-ups at most this many per second.
    static let wakeupsGoal = 1.0

    /// Runs every loop kind's pairs; one row per kind.
    static func run(_ context: BenchContext) throws -> FigureResult {
        let rounds = context.pick(2, quick: 1)
        let seconds = context.pick(10.0, quick: 1.0)
        var rows: [ResultRow] = []
        for kind in IdleLoopKind.allCases {
            var with = Idle()
            var without = Idle()
            for round in 0..<rounds {
                // Alternate which runs first, so a trend in machine load does not favour either.
                for monitored in round % 2 == 0 ? [false, true] : [true, false] {
                    let idle = try measure(kind, context: context, monitored: monitored, seconds: seconds)
                    if monitored { with = with + idle } else { without = without + idle }
                }
            }
            rows.append(row(kind, with: with, without: without, rounds: rounds, seconds: seconds))
        }
        return FigureResult(
            figure: .idlePerLoop, rows: rows,
            notes: [
                "A busy server's CPU per request with vs without the monitor is figure 11a (NIO) and 13a (Hummingbird 2)."
            ])
    }

    /// One host process idle for `seconds`, measured from 0.5 s after it said it was ready.
    private static func measure(
        _ kind: IdleLoopKind, context: BenchContext, monitored: Bool, seconds: Double
    ) throws -> Idle {
        let host = try kind.start(context, monitored: monitored, seconds: seconds + 3)
        defer { host.stop() }
        usleep(500_000)
        let watchdog = host.thread(named: "stall-watchdog")
        if monitored, watchdog == nil { throw BenchError("no stall-watchdog thread in the \(kind.name) host") }
        if !monitored, watchdog != nil {
            throw BenchError("a stall-watchdog thread in the unmonitored \(kind.name) host")
        }
        let before = host.allThreadCounts()
        let ticksBefore = host.processCPUNanos()
        let began = CStallClock.now()
        usleep(UInt32(seconds * 1e6))
        let after = host.allThreadCounts()
        let ticksAfter = host.processCPUNanos()
        let elapsed = Double(CStallClock.now() - began) / 1e9
        var idle = Idle(seconds: elapsed, processTicksCPU: ticksAfter - ticksBefore)
        // Threads that started or ended during the period are left out.
        for (tid, end) in after {
            guard let start = before[tid] else { continue }
            idle.processWakeups += end.switches - start.switches
            idle.processCPU += end.cpuNanos - start.cpuNanos
            if tid == watchdog {
                idle.watchdogWakeups = end.switches - start.switches
                idle.watchdogCPU = end.cpuNanos - start.cpuNanos
            } else if host.threadName(tid)?.hasPrefix("stall-") == true {
                idle.otherMonitorWakeups += end.switches - start.switches
                idle.otherMonitorCPU += end.cpuNanos - start.cpuNanos
            }
        }
        return idle
    }

    /// The row of one loop kind, judged on the process CPU ratio and the watchdog's wake-ups.
    private static func row(_ kind: IdleLoopKind, with: Idle, without: Idle, rounds: Int, seconds: Double) -> ResultRow
    {
        let wakeups = with.watchdogWakeups / with.seconds
        let cpuWith = with.processCPU / with.seconds
        let cpuWithout = without.processCPU / without.seconds
        let ratio = max(cpuWith, cpuFloorPerSecond) / max(cpuWithout, cpuFloorPerSecond)
        let value =
            "watchdog \(Format.fixed(wakeups, 1)) wake-ups/s, \(Format.micro(with.watchdogCPU / with.seconds))/s of CPU "
            + "(the monitor's other threads \(Format.fixed(with.otherMonitorWakeups / with.seconds, 1))/s, \(Format.micro(with.otherMonitorCPU / with.seconds))/s); "
            + "process CPU ratio \(Format.fixed(ratio, 2)) (\(Format.micro(cpuWith))/s monitored vs \(Format.micro(cpuWithout))/s unmonitored; "
            + "utime+stime \(Format.micro(with.processTicksCPU / with.seconds))/s vs \(Format.micro(without.processTicksCPU / without.seconds))/s); "
            + "process wake-ups \(Format.fixed(with.processWakeups / with.seconds, 1))/s vs \(Format.fixed(without.processWakeups / without.seconds, 1))/s"
        let method =
            "\(rounds) alternating pairs of host processes (\(kind.name)) idle for \(Int(seconds)) s each, with a StallMonitor vs none, "
            + "measured from outside from 0.5 s after the host printed ready: the stall-watchdog thread's voluntary context switches and schedstat CPU time "
            + "(/proc/<pid>/task/<tid>), and the process's CPU as the sum of its threads' schedstat times (threads alive at both ends; ns, unlike utime+stime "
            + "from /proc/<pid>/stat, which counts 10 ms ticks and is shown too); the monitor's other threads are its threads named stall-* (the writer and the timer: the session record is rewritten at start and every sessionHeartbeatInterval, 60 s; in between the timer marks it alive in place, every second for a session's first 10 s, then ramping up to that interval); totals over the runs ÷ their seconds; a process CPU below "
            + "\(Format.micro(cpuFloorPerSecond))/s counts as that in the ratio"
        return .judged(
            kind.part, "Idle \(kind.name): monitored vs unmonitored", value: value,
            goal: "process CPU ≤ \(cpuRatioGoal)× unmonitored; watchdog ≤ \(Format.fixed(wakeupsGoal, 0)) wake-up/s",
            ok: ratio <= cpuRatioGoal && wakeups <= wakeupsGoal, method: method,
            data: [
                "cpuRatio": ratio, "watchdogWakeupsPerSecond": wakeups,
                "watchdogCPUNanosecondsPerSecond": with.watchdogCPU / with.seconds,
                "otherMonitorThreadsWakeupsPerSecond": with.otherMonitorWakeups / with.seconds,
                "otherMonitorThreadsCPUNanosecondsPerSecond": with.otherMonitorCPU / with.seconds,
                "processCPUNanosecondsPerSecondWith": cpuWith, "processCPUNanosecondsPerSecondWithout": cpuWithout,
                "processTicksCPUNanosecondsPerSecondWith": with.processTicksCPU / with.seconds,
                "processTicksCPUNanosecondsPerSecondWithout": without.processTicksCPU / without.seconds,
                "processWakeupsPerSecondWith": with.processWakeups / with.seconds,
                "processWakeupsPerSecondWithout": without.processWakeups / without.seconds,
                "seconds": seconds, "rounds": Double(rounds),
            ])
    }
}
