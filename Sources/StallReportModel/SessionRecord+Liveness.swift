import Foundation

extension SessionRecord {
    /// Whether the session's process still runs: the record was written on this host, and a
    /// process with its pid exists, is not a zombie, and started at ``processStartTicks`` (or, when
    /// that is unknown, runs an executable of the same name). A record without a clean stop whose
    /// process does not run ended uncleanly: the process crashed or was killed.
    public func processIsRunning() -> Bool {
        guard hostName == StaleStatus.hostName, pid > 0 else { return false }
        guard processStartTicks > 0 else { return StaleStatus.isRunning(pid: pid, executableName: executableName) }
        return Self.startTicks(pid: pid) == processStartTicks
    }

    /// Start time (clock ticks since boot) of process `pid` from `/proc/<pid>/stat` field 22; nil
    /// when it does not exist or is a zombie.
    public static func startTicks(pid: Int) -> UInt64? {
        guard pid > 0, let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // Fields after "(comm)" start at field 3; starttime is field 22.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 19, fields[0] != "Z", fields[0] != "X" else { return nil }
        return UInt64(fields[19])
    }
}
