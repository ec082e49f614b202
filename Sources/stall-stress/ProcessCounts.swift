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

    /// Threads of the process.
    static func threads() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task"))?.count ?? 0
    }

    /// Threads by kernel name (`comm`).
    static func threadNames() -> [String: Int] {
        var names: [String: Int] = [:]
        for tid in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? [] {
            let name = (try? String(contentsOfFile: "/proc/self/task/\(tid)/comm", encoding: .utf8))?
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
