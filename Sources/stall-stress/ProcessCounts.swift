import Foundation
import Glibc

/// Open file descriptors and threads of this process, from /proc.
enum ProcessCounts {
    /// Open file descriptors, not counting the one used to list them.
    static func fileDescriptors() -> Int {
        max(0, ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.count ?? 0) - 1)
    }

    /// What each open descriptor points to (for explaining a difference).
    static func fileDescriptorTargets() -> [String: String] {
        var targets: [String: String] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            targets[name] = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)")) ?? "?"
        }
        return targets
    }

    /// The pipes and sockets this process's child processes hold, each with the child's name and
    /// pid (a pipe or socket has one identity for all its ends; a file path does not). A sanitizer
    /// runtime starts its symbolizer (`llvm-symbolizer`) as a child and talks to it through two
    /// pipes it keeps open; the monitor itself never starts a process.
    static func childDescriptorTargets() -> [String: String] {
        let parent = getpid()
        var targets: [String: String] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), pid != parent,
                let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")"),
                let open = stat.firstIndex(of: "(")
            else { continue }
            // After the name: state, then the parent's pid.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 1, Int32(fields[1]) == parent else { continue }
            let child = "\(stat[stat.index(after: open)..<close]) \(pid)"
            for fd in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? [] {
                if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"),
                    target.hasPrefix("pipe:") || target.hasPrefix("socket:")
                {
                    targets[target] = child
                }
            }
        }
        return targets
    }

    /// Threads of the process.
    static func threads() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task"))?.count ?? 0
    }

    /// Threads by kernel name (`comm`).
    static func threadNames() -> [String: Int] {
        var names: [String: Int] = [:]
        for tid in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? [] {
            let name =
                (try? String(contentsOfFile: "/proc/self/task/\(tid)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
            names[name, default: 0] += 1
        }
        return names
    }

    /// The kernel thread id of the calling thread (from /proc/thread-self, which links to
    /// `<pid>/task/<tid>`; glibc's gettid() is not imported into Swift).
    static func currentThreadID() -> Int {
        let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
        return Int(target.split(separator: "/").last ?? "") ?? 0
    }
}
