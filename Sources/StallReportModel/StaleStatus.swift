import Foundation

/// Tells whether an `inProgress` report is stale: written on this host by a process that no
/// longer runs, so the stall never ended and the report counts as `fatal`.
public enum StaleStatus {
    /// This machine's host name, as reports record it.
    public static let hostName: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()

    /// The status a reader should use: `fatal` for a stale `inProgress` report, else the report's own.
    public static func effectiveStatus(of report: StallReport) -> StallStatus {
        guard report.status == .inProgress, report.process.hostName == hostName else { return report.status }
        return isRunning(pid: report.process.pid, executableName: report.process.executableName) ? .inProgress : .fatal
    }

    /// Whether process `pid` exists, is not a zombie, and runs an executable of that name
    /// (`/proc/<pid>/comm` holds the first 15 bytes of the name).
    public static func isRunning(pid: Int, executableName: String) -> Bool {
        guard pid > 0, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(after: close)...].drop(while: { $0 == " " }).first
        if state == "Z" || state == "X" { return false }
        let comm = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        return !comm.isEmpty && executableName.hasPrefix(comm)
    }
}
