import CoreMetrics

extension StallMonitor {
    /// Where the monitor's swift-metrics go and what they are called. The monitor never
    /// bootstraps the metrics system: by default it uses the global `MetricsSystem.factory`
    /// (whatever the app bootstrapped, a no-op otherwise).
    ///
    /// ```swift
    /// // Route one monitor's metrics elsewhere (a test's TestMetrics, a second registry):
    /// config.metrics = .init(factory: testMetrics, dimensions: [("service", "checkout")])
    /// // No metrics at all:
    /// config.metrics = .init(factory: NOOPMetricsHandler.instance)
    /// ```
    public struct MetricsOptions: Sendable {
        /// The factory the monitor makes its metrics with; nil (the default) takes
        /// `MetricsSystem.factory` when the monitor starts.
        public var factory: (any MetricsFactory)?
        /// The first part of every metric's label, before a dot (`stallmonitor.stall.duration`).
        /// Default `stallmonitor`.
        public var labelPrefix: String
        /// Dimensions added to every metric, e.g. `[("service", "checkout")]`. Keep them constant
        /// and low-cardinality: every distinct value is a time series of its own.
        public var dimensions: [(String, String)]

        /// Options with the defaults above.
        public init(
            factory: (any MetricsFactory)? = nil, labelPrefix: String = "stallmonitor",
            dimensions: [(String, String)] = []
        ) {
            self.factory = factory
            self.labelPrefix = labelPrefix
            self.dimensions = dimensions
        }
    }
}
