import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether the process that wrote a file in a report directory still runs: the one place the
/// monitor (quota, stale sweep) and `stallreport` (stale `inProgress` reports, unclean sessions)
/// ask. With the facts a report or session record holds the answer is ``ProcessLiveness``'s rule;
/// with only the pid of a file's name it is ``mayRun(pid:)``.
package enum WriterLiveness {
    /// What is known of a file's writer.
    package enum State: Sendable, Equatable {
        /// It runs on this host.
        case running
        /// It ran on this host and runs no more.
        case gone
        /// It ran on another host: nothing is known.
        case elsewhere
    }

    /// The state of the process a report or session record names, by ``ProcessLiveness``'s rule
    /// (pid, recorded start time, else executable name) when it ran on `localHost`.
    package static func state(
        hostName: String, pid: Int, startTicks: UInt64?, executableName: String,
        localHost: String = StaleStatus.hostName
    ) -> State {
        guard hostName == localHost else { return .elsewhere }
        return ProcessLiveness.isRunning(pid: pid, startTicks: startTicks, executableName: executableName)
            ? .running : .gone
    }

    /// Whether the writer of a file whose name holds `pid` may still run, knowing nothing but the
    /// pid: a live (not zombie) process has that pid (a reused pid counts as running, so a file is
    /// kept rather than wrongly deleted).
    package static func mayRun(pid: Int) -> Bool {
        ProcessLiveness.startTicks(pid: pid) != nil
    }
}
