import Foundation

/// Tells whether an `inProgress` report is stale: written on this host by a process that no
/// longer runs, so the stall never ended and the report counts as `fatal`.
public enum StaleStatus {
    /// This machine's host name, as reports record it.
    public static let hostName: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return "" }
        return CString.decode(buffer)
    }()

    /// The status a reader should use: `fatal` for a stale `inProgress` report, else the report's
    /// own. Whether its process still runs is decided by ``ProcessLiveness``'s rule (pid and the
    /// start time the report recorded), as the monitor's report directory asks it.
    public static func effectiveStatus(of report: StallReport) -> StallStatus {
        effectiveStatus(
            status: report.status, hostName: report.process.hostName, pid: report.process.pid,
            startTicks: report.process.startTicks, executableName: report.process.executableName)
    }

    /// The same decision from the report's fields (for readers that do not build the report).
    public static func effectiveStatus(
        status: StallStatus, hostName reportHost: String, pid: Int, startTicks: UInt64?,
        executableName: String
    ) -> StallStatus {
        guard status == .inProgress else { return status }
        let writer = WriterLiveness.state(
            hostName: reportHost, pid: pid, startTicks: startTicks, executableName: executableName)
        return writer == .gone ? .fatal : status
    }
}
