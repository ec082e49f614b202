import Foundation

/// Figure 15: what the monitor itself costs an idle process, per loop kind: the wake-ups and CPU
/// time of StallMonitor's own threads (the watchdog, the writer, the timer, the blocking-call
/// collector: the threads named `stall-…`) once the session record's alive marks have ramped to
/// their steady interval, and the host's own threads' wake-ups against the same host unmonitored.
/// Every host runs at the same time (idle processes do not disturb each other's counts, and each
/// one's warm-up would otherwise add minutes).
enum IdlePerLoopFigure {
    /// What one idle period of one host process cost, from /proc.
    struct Idle {
        /// How long the period lasted.
        var seconds = 0.0
        /// Voluntary context switches and CPU time (schedstat, ns) of the `stall-watchdog` thread.
        var watchdogWakeups = 0.0
        var watchdogCPU = 0.0
        /// The same for every StallMonitor thread (named `stall-…`), the watchdog included.
        var monitorWakeups = 0.0
        var monitorCPU = 0.0
        /// Voluntary context switches of the host's own threads (every other thread).
        var hostWakeups = 0.0
        /// CPU time (schedstat, ns) of every thread.
        var processCPU = 0.0

        /// Adds another period's counts.
        static func + (left: Idle, right: Idle) -> Idle {
            Idle(
                seconds: left.seconds + right.seconds, watchdogWakeups: left.watchdogWakeups + right.watchdogWakeups,
                watchdogCPU: left.watchdogCPU + right.watchdogCPU,
                monitorWakeups: left.monitorWakeups + right.monitorWakeups,
                monitorCPU: left.monitorCPU + right.monitorCPU, hostWakeups: left.hostWakeups + right.hostWakeups,
                processCPU: left.processCPU + right.processCPU)
        }
    }

    /// The goals on the monitor's own threads, per second of idle time: wake-ups and CPU (ns).
    static let monitorWakeupsGoal = 1.0
    static let monitorCPUGoal = 100_000.0
    /// The host's own threads may wake this much more often per second monitored than not (a
    /// wake-up of counting noise over the runs), or 5 % more, whichever is larger.
    static let hostWakeupsSlack = 0.1
    /// How long a host lives before it is measured: the session record's alive marks come every
    /// second for a session's first 10 s, then ramp up to the heartbeat interval.
    static let warmUpSeconds = 100.0

    /// One host of the figure, started.
    private struct Host {
        var kind: IdleLoopKind
        var monitored: Bool
        var process: IdleHostProcess
    }

    /// Starts every kind's hosts at once, lets them live `warmUpSeconds`, measures them over one
    /// period; one row per kind.
    static func run(_ context: BenchContext) throws -> FigureResult {
        let rounds = context.pick(2, quick: 1)
        let seconds = context.pick(30.0, quick: 1.0)
        let warmUp = context.pick(warmUpSeconds, quick: 1.0)
        var hosts: [Host] = []
        defer { for host in hosts { host.process.stop() } }
        let kinds = IdleLoopKind.allCases.filter { $0.unavailable(context) == nil }
        for kind in kinds {
            for _ in 0..<rounds {
                for monitored in [false, true] {
                    let process = try kind.start(context, monitored: monitored, seconds: warmUp + seconds + 30)
                    hosts.append(Host(kind: kind, monitored: monitored, process: process))
                }
            }
        }
        // The yardstick: a thread that does nothing but wake once a second.
        let reference = try IdleHostProcess(
            context.executable, ["wake-reference", "--seconds", String(warmUp + seconds + 30)],
            scratch: context.scratch)
        defer { reference.stop() }
        for host in hosts {
            let watchdog = host.process.thread(named: "stall-watchdog")
            if host.monitored, watchdog == nil {
                throw BenchError("no stall-watchdog thread in the \(host.kind.name) host")
            }
            if !host.monitored, watchdog != nil {
                throw BenchError("a stall-watchdog thread in the unmonitored \(host.kind.name) host")
            }
        }
        // The first host started earliest: wait until the last one is `warmUp` old.
        usleep(UInt32(warmUp * 1e6))
        let referenceThread = reference.thread(named: WakeReference.threadName)
        let before = hosts.map { $0.process.allThreadCounts() }
        let referenceBefore = referenceThread.flatMap(reference.threadCounts)
        let began = CStallClock.now()
        usleep(UInt32(seconds * 1e6))
        let after = hosts.map { $0.process.allThreadCounts() }
        let referenceAfter = referenceThread.flatMap(reference.threadCounts)
        let elapsed = Double(CStallClock.now() - began) / 1e9
        var rows: [ResultRow] = []
        for kind in IdleLoopKind.allCases {
            if let reason = kind.unavailable(context) {
                rows.append(
                    ResultRow(
                        kind.part, "Idle \(kind.name): the monitor's own cost", value: "not measured: \(reason)",
                        goal: "—", verdict: .info, method: "its host was not built", data: [:]))
                continue
            }
            var with = Idle()
            var without = Idle()
            for (index, host) in hosts.enumerated() where host.kind == kind {
                let idle = measured(host.process, before: before[index], after: after[index], seconds: elapsed)
                if host.monitored { with = with + idle } else { without = without + idle }
            }
            rows.append(row(kind, with: with, without: without, rounds: rounds, seconds: seconds, warmUp: warmUp))
        }
        rows.append(referenceRow(before: referenceBefore, after: referenceAfter, seconds: elapsed, warmUp: warmUp))
        return FigureResult(
            figure: .idlePerLoop, rows: rows,
            notes: [
                "A busy server's CPU per request with vs without the monitor is figure 11a (NIO) and 13a (Hummingbird 2)."
            ])
    }

    /// Row 15f: what one wake-up a second costs a thread that does nothing else, measured beside
    /// the hosts (the least any thread that wakes once a second costs on this machine).
    private static func referenceRow(
        before: (switches: Double, cpuNanos: Double)?, after: (switches: Double, cpuNanos: Double)?, seconds: Double,
        warmUp: Double
    ) -> ResultRow {
        let name = "Reference: a thread that only wakes once a second"
        guard let before, let after, seconds > 0 else {
            return ResultRow(
                "15f", name, value: "not measured: the wake-reference thread was not found", goal: "—",
                verdict: .info, method: "stall-bench wake-reference", data: [:])
        }
        let wakeups = (after.switches - before.switches) / seconds
        let cpu = (after.cpuNanos - before.cpuNanos) / seconds
        let perWakeup = wakeups > 0 ? cpu / wakeups : 0
        return ResultRow(
            "15f", name,
            value:
                "\(Format.fixed(wakeups, 2)) wake-ups/s, \(Format.micro(cpu))/s of CPU (\(Format.micro(perWakeup)) per wake-up)",
            goal: "— (the yardstick of 15a–e: what a wake-up costs on this machine when nothing is done)",
            verdict: .info,
            method:
                "stall-bench wake-reference: one thread that sleeps in poll() for 1 s, again and again, and does nothing else; "
                + "started with the hosts and measured like them (voluntary context switches and schedstat CPU time over the same "
                + "\(Int(seconds.rounded())) s, after \(Int(warmUp)) s); on a virtual machine most of it is the vCPU's way back from idle",
            data: [
                "wakeupsPerSecond": wakeups, "cpuNanosecondsPerSecond": cpu, "cpuNanosecondsPerWakeup": perWakeup,
                "seconds": seconds,
            ])
    }

    /// One host's counts between two readings of its threads; threads that started or ended in
    /// between are left out.
    private static func measured(
        _ host: IdleHostProcess, before: [Int32: (switches: Double, cpuNanos: Double)],
        after: [Int32: (switches: Double, cpuNanos: Double)], seconds: Double
    ) -> Idle {
        var idle = Idle(seconds: seconds)
        for (tid, end) in after {
            guard let start = before[tid] else { continue }
            let wakeups = end.switches - start.switches
            let cpu = end.cpuNanos - start.cpuNanos
            idle.processCPU += cpu
            let name = host.threadName(tid) ?? ""
            guard name.hasPrefix("stall-") else {
                idle.hostWakeups += wakeups
                continue
            }
            idle.monitorWakeups += wakeups
            idle.monitorCPU += cpu
            if name == "stall-watchdog" {
                idle.watchdogWakeups += wakeups
                idle.watchdogCPU += cpu
            }
        }
        return idle
    }

    /// The row of one loop kind, judged on the monitor's own threads and the host's wake-ups.
    private static func row(
        _ kind: IdleLoopKind, with: Idle, without: Idle, rounds: Int, seconds: Double, warmUp: Double
    ) -> ResultRow {
        let monitorWakeups = with.monitorWakeups / with.seconds
        let monitorCPU = with.monitorCPU / with.seconds
        let hostWith = with.hostWakeups / with.seconds
        let hostWithout = without.hostWakeups / without.seconds
        let hostLimit = hostWithout + max(hostWakeupsSlack, hostWithout * 0.05)
        let value =
            "the monitor's threads \(Format.fixed(monitorWakeups, 2)) wake-ups/s, \(Format.micro(monitorCPU))/s of CPU "
            + "(the watchdog \(Format.fixed(with.watchdogWakeups / with.seconds, 2))/s, \(Format.micro(with.watchdogCPU / with.seconds))/s); "
            + "the host's own threads \(Format.fixed(hostWith, 2)) wake-ups/s monitored vs \(Format.fixed(hostWithout, 2))/s not; "
            + "process CPU \(Format.micro(with.processCPU / with.seconds))/s vs \(Format.micro(without.processCPU / without.seconds))/s"
        let method =
            "\(rounds) host processes (\(kind.name)) with a StallMonitor and \(rounds) without, every kind's hosts at once, measured from outside "
            + "over \(Int(seconds)) s once each had lived \(Int(warmUp)) s (the session record's alive marks come every second for its first 10 s, "
            + "then ramp up to sessionHeartbeatInterval, 60 s): voluntary context switches and schedstat CPU time (/proc/<pid>/task/<tid>) of the threads "
            + "named stall-* (watchdog, writer, timer, blocking-call collector) and of the host's other threads, threads alive at both ends; totals ÷ seconds"
        let ok = monitorWakeups <= monitorWakeupsGoal && monitorCPU <= monitorCPUGoal && hostWith <= hostLimit
        return .judged(
            kind.part, "Idle \(kind.name): the monitor's own cost", value: value,
            goal:
                "the monitor's threads ≤ \(Format.fixed(monitorWakeupsGoal, 0)) wake-up/s and ≤ \(Format.micro(monitorCPUGoal))/s of CPU; "
                + "no extra wake-ups of the host's threads (≤ \(Format.fixed(hostWakeupsSlack, 1))/s or 5 % more)",
            ok: ok, method: method,
            data: [
                "monitorWakeupsPerSecond": monitorWakeups, "monitorCPUNanosecondsPerSecond": monitorCPU,
                "watchdogWakeupsPerSecond": with.watchdogWakeups / with.seconds,
                "watchdogCPUNanosecondsPerSecond": with.watchdogCPU / with.seconds,
                "hostWakeupsPerSecondWith": hostWith, "hostWakeupsPerSecondWithout": hostWithout,
                "processCPUNanosecondsPerSecondWith": with.processCPU / with.seconds,
                "processCPUNanosecondsPerSecondWithout": without.processCPU / without.seconds,
                "seconds": seconds, "warmUpSeconds": warmUp, "rounds": Double(rounds),
            ])
    }
}
