import Foundation
import Glibc
import StallReportModel

/// The machine a run was measured on, including how busy it was.
struct MachineFacts: Codable, Sendable {
    var cpu: String
    var cores: Int
    var kernel: String
    var loadBefore: [Double]
    var loadAfter: [Double]
    var note: String?

    static func describe(loadBefore: [Double], loadAfter: [Double], note: String?) -> MachineFacts {
        var name = utsname()
        uname(&name)
        let kernel = CString.decode(fixed: name.release)
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model =
            cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" }
            ?? "unknown"
        return MachineFacts(
            cpu: model, cores: ProcessInfo.processInfo.activeProcessorCount, kernel: kernel,
            loadBefore: loadBefore, loadAfter: loadAfter, note: note)
    }

    /// The 1, 5 and 15 minute load averages.
    static func loadAverage() -> [Double] {
        var loads = [Double](repeating: 0, count: 3)
        _ = getloadavg(&loads, 3)
        return loads.map { ($0 * 100).rounded() / 100 }
    }
}

/// CPU time the hypervisor gave to other guests while this machine wanted to run ("steal", the
/// eighth field of /proc/stat's cpu line). On a shared VM it stops every thread at once, for
/// milliseconds: latencies measured meanwhile are the host's, not the monitor's.
struct CPUSteal {
    let total: UInt64
    let steal: UInt64

    /// The counters now; nil where /proc/stat has no steal field.
    static func now() -> CPUSteal? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = text.split(separator: "\n").first, line.hasPrefix("cpu ")
        else { return nil }
        let fields = line.split(separator: " ").dropFirst().compactMap { UInt64($0) }
        guard fields.count >= 8 else { return nil }
        return CPUSteal(total: fields.prefix(8).reduce(0, +), steal: fields[7])
    }

    /// The share of CPU time stolen between `earlier` and this reading.
    func share(since earlier: CPUSteal) -> Double? {
        guard total > earlier.total else { return nil }
        return Double(steal - earlier.steal) / Double(total - earlier.total)
    }
}
