import Foundation

extension SessionRecord {
    /// Whether the session's process still runs: the record was written on this host, and a
    /// process with its pid exists, is not a zombie, and started at ``processStartTicks`` (or, when
    /// that is unknown, runs an executable of the same name). A record without a clean stop whose
    /// process does not run ended uncleanly: the process crashed or was killed.
    public func processIsRunning() -> Bool {
        WriterLiveness.state(
            hostName: hostName, pid: pid, startTicks: processStartTicks, executableName: executableName) == .running
    }
}
