// The snippets of Sources/StallMonitor/StallMonitor.docc/Metrics.md, compiled. Markers and wrapping: DocSnippetsTests.
import Metrics
import StallMonitor

/// The metrics options example (statements), as a function's body.
func metricsOptions(config: StallMonitor.Configuration, myFactory: any MetricsFactory) {
    var config = config
    // snippet: Sources/StallMonitor/StallMonitor.docc/Metrics.md
    config.metrics = .init(factory: myFactory,              // nil (default): MetricsSystem.factory
                           labelPrefix: "stallmonitor",     // the default
                           dimensions: [("service", "checkout")])  // added to every metric
    config.metrics = .init(factory: NOOPMetricsHandler.instance)    // no metrics at all
    // snippet: end
    _ = config
}
