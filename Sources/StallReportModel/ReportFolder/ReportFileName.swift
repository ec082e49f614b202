import Foundation

/// The names of the files the monitor writes into a report directory, written and read here only:
/// stall reports `stall-<UTC time>-p<pid>-<n>.json` and session records
/// `session-<UTC time>-p<pid>[-<n>].session`. Names sort by time: the stamp follows the prefix.
package enum ReportFileName {
    /// The time stamp of a name: `ReportCoding`'s UTC date without `-` and `:`
    /// (e.g. `20260101T120000.123Z`). Without Foundation's `replacingOccurrences`.
    package static func stamp(_ date: Date) -> String {
        String(ReportCoding.formatDate(date).filter { $0 != "-" && $0 != ":" })
    }

    /// A stall report's name: the `number`th report of process `pid` (zero-padded to 4 digits).
    package static func report(stamp: String, pid: Int32, number: Int) -> String {
        numbered("stall", stamp: stamp, pid: pid, number: number)
    }

    /// `<prefix>-<stamp>-p<pid>-<n>.json`, the number zero-padded to 4 digits: the shape of
    /// every report's name (stall reports, blocking-calls reports).
    package static func numbered(_ prefix: String, stamp: String, pid: Int32, number: Int) -> String {
        let digits = String(number)
        let padded = String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        return "\(prefix)-\(stamp)-p\(pid)-\(padded).json"
    }

    /// A session record's name: the first record of a process has no number, later ones (other
    /// monitors of the process, or a name that was taken) have `-<number>`.
    package static func session(stamp: String, pid: Int32, number: Int) -> String {
        let suffix = number > 1 ? "-\(number)" : ""
        return "session-\(stamp)-p\(pid)\(suffix).session"
    }

    /// Whether `name` is a stall report's name as the monitor writes it.
    package static func isReport(_ name: String) -> Bool {
        name.hasPrefix("stall-") && name.hasSuffix(".json")
    }

    /// Whether `name` is a session record's name as the monitor writes it (stricter than
    /// ``SessionRecord/isSessionFileName(_:)``, the readers' rule: only these may be deleted).
    package static func isSession(_ name: String) -> Bool {
        name.hasPrefix("session-") && name.hasSuffix(".session")
    }

    /// The pid in a report's name `stall-<time>-p<pid>-<n>.json`, when there is one.
    package static func reportWriterPID(_ name: String) -> Int? {
        let parts = name.dropLast(".json".count).split(separator: "-")
        guard parts.count >= 4, parts[parts.count - 2].first == "p" else { return nil }
        return Int(parts[parts.count - 2].dropFirst())
    }

    /// The pid in a session record's name `session-<time>-p<pid>[-<n>].session`, when there is one.
    package static func sessionWriterPID(_ name: String) -> Int? {
        let parts = name.dropLast(".session".count).split(separator: "-")
        guard parts.count >= 3, parts[2].first == "p" else { return nil }
        return Int(parts[2].dropFirst())
    }
}
