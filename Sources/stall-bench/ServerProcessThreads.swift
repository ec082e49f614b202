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
            let comm = (try? String(contentsOfFile: "\(task)/\(entry)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
            if comm == name { return Int32(entry) }
        }
        return nil
    }

    /// A thread's voluntary context switches and CPU time (ns), from /proc.
    func threadCounts(_ tid: Int32) -> (switches: Double, cpuNanos: Double)? {
        let base = "/proc/\(pid)/task/\(tid)"
        guard let status = try? String(contentsOfFile: "\(base)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("voluntary_ctxt_switches:") }),
              let switches = Double(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)),
              let schedstat = try? String(contentsOfFile: "\(base)/schedstat", encoding: .utf8),
              let cpu = Double(schedstat.split(separator: " ")[0]) else { return nil }
        return (switches, cpu)
    }
}
