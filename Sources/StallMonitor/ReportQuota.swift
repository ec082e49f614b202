import Foundation

/// Keeps the report directory within a number of files and bytes by deleting the oldest stall
/// reports (names sort by time) first; what it deletes is counted.
struct ReportQuota: Sendable {
    let directory: URL
    let maxFiles: Int
    let maxBytes: Int
    let counters: MonitorCounters

    /// Deletes the oldest reports until the directory is within quota, never `keeping`.
    func enforce(keeping: String) {
        let manager = FileManager.default
        guard let names = try? manager.contentsOfDirectory(atPath: directory.path) else { return }
        var reports = names.filter { $0.hasPrefix("stall-") && $0.hasSuffix(".json") }.sorted()
        var sizes: [String: Int] = [:]
        var total = 0
        for name in reports {
            let attributes = try? manager.attributesOfItem(atPath: directory.appendingPathComponent(name).path)
            let size = (attributes?[.size] as? Int) ?? 0
            sizes[name] = size
            total += size
        }
        while reports.count > maxFiles || total > maxBytes, let oldest = reports.first(where: { $0 != keeping }) {
            reports.removeAll { $0 == oldest }
            total -= sizes[oldest] ?? 0
            if unlink(directory.appendingPathComponent(oldest).path) == 0 {
                counters.reportsDeletedForQuota.add(1, ordering: .relaxed)
            }
        }
    }
}
