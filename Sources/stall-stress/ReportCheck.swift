import Foundation
import StallReportKit

/// Reads back everything a stress round left in its report directory.
struct ReportCheck {
    /// What was found.
    struct Result: Codable, Sendable {
        var reportFiles = 0
        var decoded = 0
        var decodeFailures: [String] = []
        var notEnded = 0
        var belowThreshold = 0
        var rateLimited = 0
        var samplingUnaccounted = 0
        var reportsByThread: [Int: Int] = [:]
        var temporaryFiles = 0
        var sessionRecords = 0
        var sessionsCleanlyStopped = 0
        var sessionStalls = 0
        var bytes = 0
    }

    let directory: URL
    let thresholdMs: Double

    func run() -> Result {
        var result = Result()
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
        for name in names {
            let url = directory.appendingPathComponent(name)
            if name.hasPrefix(".") && name.hasSuffix(".tmp") {
                result.temporaryFiles += 1
                continue
            }
            if name.hasSuffix(".session") {
                result.sessionRecords += 1
                let json =
                    (try? Data(contentsOf: url)).flatMap {
                        try? JSONSerialization.jsonObject(with: $0) as? [String: Any]
                    } ?? [:]
                if json["cleanStop"] as? Bool == true { result.sessionsCleanlyStopped += 1 }
                result.sessionStalls += json["stalls"] as? Int ?? 0
                continue
            }
            guard name.hasPrefix("stall-") && name.hasSuffix(".json") else { continue }
            result.reportFiles += 1
            result.bytes += (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
            let report: StallReport
            do {
                report = try StallReport.read(from: url)
            } catch {
                result.decodeFailures.append("\(name): \(error)")
                continue
            }
            result.decoded += 1
            if report.status != .ended { result.notEnded += 1 }
            if report.durationMs < thresholdMs { result.belowThreshold += 1 }
            if report.rateLimited == true { result.rateLimited += 1 }
            let sampling = report.sampling
            // Every attempt is taken, timed out or skipped for a reason; `watchdogStarved` marks
            // a stall no sample could be attempted for (the watchdog had no CPU during it).
            let skipped = sampling.skipped.filter { $0.key != "watchdogStarved" }.values.reduce(0, +)
            if sampling.attempted != sampling.taken + sampling.timedOut + skipped {
                result.samplingUnaccounted += 1
            }
            result.reportsByThread[report.loop.threadID, default: 0] += 1
        }
        return result
    }
}
