import Foundation

/// The one rule for "does the process that wrote this file still run?", used by the monitor
/// (stale-report sweep) and by `stallreport` alike: a process with that pid exists on this host
/// and is not a zombie, and it is the same process: it started at the recorded start time when
/// one is known (a pid reused by a later process has another), else it runs an executable of the
/// same name (`/proc/<pid>/comm` keeps the first 15 bytes).
public enum ProcessLiveness {
    /// The facts of `/proc/<pid>/stat` the rule needs.
    public struct Stat: Sendable, Equatable {
        /// Scheduler state letter (`R`, `S`, `D`, `Z`, …).
        public var state: Character
        /// Start time in clock ticks since boot (field 22).
        public var startTicks: UInt64
    }

    /// Parses the text of a `/proc/<pid>/stat` (or `/proc/<pid>/task/<tid>/stat`) file; nil when
    /// it is not one. The command name may hold spaces and parentheses: fields follow its last `)`.
    public static func parseStat(_ text: String) -> Stat? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        // Fields after "(comm)" start at field 3 (the state); starttime is field 22.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let state = fields[0].first, let ticks = UInt64(fields[19]) else { return nil }
        return Stat(state: state, startTicks: ticks)
    }

    /// `/proc/<pid>/stat` of process `pid`, nil when there is no such process.
    public static func stat(pid: Int) -> Stat? {
        guard pid > 0, let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return nil }
        return parseStat(text)
    }

    /// The start time of a live (not zombie) process `pid`, in clock ticks since boot.
    public static func startTicks(pid: Int) -> UInt64? {
        guard let stat = stat(pid: pid), stat.state != "Z", stat.state != "X" else { return nil }
        return stat.startTicks
    }

    /// Whether the process that wrote a file runs now, by the rule above. `startTicks` is the start
    /// time the file recorded (nil or 0: unknown, from an older monitor).
    public static func isRunning(pid: Int, startTicks recorded: UInt64?, executableName: String) -> Bool {
        guard let ticks = startTicks(pid: pid) else { return false }
        if let recorded, recorded > 0 { return ticks == recorded }
        let comm = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        return !comm.isEmpty && executableName.hasPrefix(comm)
    }
}
