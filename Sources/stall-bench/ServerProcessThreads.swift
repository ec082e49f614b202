import Foundation

/// A server process a figure measures: its threads, read from /proc.
protocol ServerProcessThreads {
    var pid: Int32 { get }
}

extension ServerProcessThreads {
    /// The kernel id of the process's thread named `name`.
    func thread(named name: String) -> Int32? {
        let task = "/proc/\(pid)/task"
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: task)) ?? [] {
            if let tid = Int32(entry), threadName(tid) == name { return tid }
        }
        return nil
    }

    /// A thread's name (its comm), from /proc.
    func threadName(_ tid: Int32) -> String? {
        (try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/comm", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A thread's voluntary context switches and CPU time (ns), from /proc.
    func threadCounts(_ tid: Int32) -> (switches: Double, cpuNanos: Double)? {
        let base = "/proc/\(pid)/task/\(tid)"
        guard let status = try? String(contentsOfFile: "\(base)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("voluntary_ctxt_switches:") }),
            let switches = Double(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)),
            let schedstat = try? String(contentsOfFile: "\(base)/schedstat", encoding: .utf8),
            let cpu = Double(schedstat.split(separator: " ")[0])
        else { return nil }
        return (switches, cpu)
    }

    /// The whole process's CPU time (utime + stime) in nanoseconds, from /proc/<pid>/stat (clock
    /// ticks: 10 ms steps at the usual 100 Hz).
    func processCPUNanos() -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the comm: state is field 3; utime and stime are fields 14 and 15.
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) * 1e9 / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// CPU time (schedstat, ns) of the whole process and of StallMonitor's own threads (named
    /// `stall-…`: watchdog, writer, heartbeat, blocking-call collector), summed over the live
    /// threads.
    func monitorAndProcessCPUNanos() -> (monitor: Double, process: Double) {
        var monitor = 0.0
        var process = 0.0
        for (tid, counts) in allThreadCounts() {
            process += counts.cpuNanos
            if threadName(tid)?.hasPrefix("stall-") == true { monitor += counts.cpuNanos }
        }
        return (monitor, process)
    }

    /// Every live thread's voluntary context switches and time on a CPU (schedstat, ns), by
    /// kernel thread id: summed over the threads alive at both ends of a period, the process's
    /// wake-ups and CPU time to the nanosecond.
    func allThreadCounts() -> [Int32: (switches: Double, cpuNanos: Double)] {
        var counts: [Int32: (switches: Double, cpuNanos: Double)] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? [] {
            if let tid = Int32(entry), let count = threadCounts(tid) { counts[tid] = count }
        }
        return counts
    }
}
