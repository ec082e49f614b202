import Foundation
import Glibc
import StallMonitor

/// Clocks and resource counters of this process.
enum CStallClock {
    /// CLOCK_MONOTONIC in nanoseconds (vDSO).
    @inline(__always)
    static func now() -> UInt64 { Kernel.monotonicNanoseconds() }

    /// CPU time of the calling thread in nanoseconds.
    static func threadCPU() -> Int64 { Kernel.threadCPUNanoseconds(Kernel.currentThreadID()) }

    /// CPU time (user + system) of the whole process in nanoseconds.
    static func processCPU() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func ns(_ time: timeval) -> Double { Double(time.tv_sec) * 1e9 + Double(time.tv_usec) * 1e3 }
        return ns(usage.ru_utime) + ns(usage.ru_stime)
    }

    /// Resident set size of this process in bytes (VmRSS), or 0 when unknown.
    static func residentBytes() -> Double {
        statusField("VmRSS:")
    }

    /// A `kB` field of /proc/self/status in bytes.
    static func statusField(_ name: String) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name) }),
            let kilobytes = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({
                Double($0)
            })
        else { return 0 }
        return kilobytes * 1024
    }

    /// The kernel thread ids of this process.
    static func threadIDs() -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).compactMap { Int32($0) }
    }
}
