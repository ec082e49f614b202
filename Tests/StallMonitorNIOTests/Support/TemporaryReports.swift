import CoreMetrics
import Foundation
import StallMonitor

/// A temporary report directory for one test.
struct TemporaryReports {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("StallMonitorNIOTests-\(UUID().uuidString)", isDirectory: true)

    /// A configuration that writes here; its metrics go to `metrics` when given.
    func configuration(
        threshold: Duration = .milliseconds(250), metrics: (any MetricsFactory)? = nil
    ) -> StallMonitor.Configuration {
        var configuration = StallMonitor.Configuration(threshold: threshold, reportDirectory: url)
        if let metrics { configuration.metrics = .init(factory: metrics) }
        return configuration
    }

    /// The reports written, in file-name order.
    func reports() throws -> [StallReport] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? [])
            .filter { $0.hasSuffix(".json") && $0.hasPrefix("stall-") }
            .sorted()
        return try names.map { try StallReport.read(from: url.appendingPathComponent($0)) }
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// A list several threads append to.
final class LockedList<Element>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [Element] = []

    func append(_ element: Element) { lock.withLock { stored.append(element) } }
    var items: [Element] { lock.withLock { stored } }
}
