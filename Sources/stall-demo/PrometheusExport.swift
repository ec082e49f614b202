import Foundation
import Metrics
import Prometheus

/// `stall-demo --prometheus FILE`: bootstraps swift-metrics with swift-prometheus (as an app
/// would, once, before starting the monitor, which uses the global factory by default) and
/// writes the registry's exposition text at exit, as a scrape of `/metrics` would return it.
struct PrometheusExport {
    let registry = PrometheusCollectorRegistry()
    /// Where the text goes: a file, or standard output for `-`.
    let destination: String

    /// Makes this registry the process's metrics backend.
    func bootstrap() {
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
    }

    /// Writes the exposition text (Prometheus text format 0.0.4).
    func write() throws {
        let text = registry.emitToString()
        if destination == "-" {
            print(text, terminator: "")
        } else {
            try Data(text.utf8).write(to: URL(fileURLWithPath: destination))
        }
    }
}
