import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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
        guard pid > 0, let text = readSmallFile("/proc/\(pid)/stat") else { return nil }
        return parseStat(text)
    }

    /// A small file's text, read with `open`/`read` until its end (a `/proc` file reports size 0),
    /// nil when it cannot be read. Not `String(contentsOfFile:)`: a monitor reads its own stat at
    /// start, and Foundation's file reading was code an idle monitor touched only for that.
    private static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while bytes.count < 1 << 20 {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
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
        let comm =
            (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        return !comm.isEmpty && executableName.hasPrefix(comm)
    }
}
