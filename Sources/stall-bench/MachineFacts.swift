import Foundation
import Glibc

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
        let kernel = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" } ?? "unknown"
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
